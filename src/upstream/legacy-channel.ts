/**
 * @module A 2025 upstream (the `initialize` handshake, a session): our own client connects, lists and carries
 * the untied traffic; forwarded requests go below it (forward.ts). A 2026-07-28 client's envelope, if the caller
 * left it in `_meta`, never reaches a 2025 server (a dual-era one would take the request for a 2026 one).
 */
import type { ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { Offer } from "../catalog/inventory.js";
import { hasClaim, withoutEnvelope } from "../modern/meta.js";
import { ErrorCode, McpError } from "../protocol.js";
import type { Channel, ChannelSetup, Params } from "./channel.js";
import { answerItself, upstreamClient } from "./client.js";
import { Forwarder, type ForwardOptions } from "./forward.js";
import { listOffer } from "./lists.js";
import { withTimeout } from "./util.js";

/** Initializes a session on `setup.built` (within `timeoutMs`); throws when the upstream does not answer. */
export async function openLegacy(setup: ChannelSetup, timeoutMs: number): Promise<Channel> {
  const { spec, kind, events } = setup;
  const client = upstreamClient(
    spec,
    kind,
    { clientName: setup.clientInfo.name, clientVersion: setup.clientInfo.version },
    {
      onListChanged: events.onListChanged,
      ...(events.onNotification ? { onNotification: events.onNotification } : {}),
      ...(events.onServerRequest ? { onServerRequest: events.onServerRequest } : {}),
    },
  );
  const forwarder = new Forwarder();
  let open = false;
  client.onclose = () => {
    forwarder.failAll(new McpError(ErrorCode.ConnectionClosed, "Connection closed"));
    if (open) events.onClosed();
  };
  try {
    await withTimeout(client.connect(setup.built.transport, { timeout: timeoutMs }), timeoutMs, "initialize");
  } catch (err) {
    await client.close().catch(() => {});
    throw err;
  }
  forwarder.attach(setup.built.transport);
  open = true;
  const transport = setup.built.transport;
  return {
    era: "2025",
    get capabilities(): ServerCapabilities | undefined {
      return client.getServerCapabilities();
    },
    request(method: string, params: Params, options: ForwardOptions & { readonly timeoutMs: number }) {
      const tied = options.onServerRequest;
      const { envelope: _e, ...rest } = options;
      return forwarder.request(transport, method, legacyParams(params), {
        ...rest,
        ...(tied
          ? {
              onServerRequest: (request, signal) =>
                Promise.resolve(answerItself(spec, kind, request.method) ?? tied(request, signal)),
            }
          : {}),
      });
    },
    async notify(notification) {
      await client.notification(notification as never);
    },
    listOffer(onSkipped): Promise<Offer> {
      const request = (method: string, params: Params) =>
        client.request(method, params, { timeout: timeoutMs });
      return listOffer(request, client.getServerCapabilities() ?? {}, onSkipped);
    },
    async close() {
      open = false;
      await client.close().catch(() => {});
    },
  };
}

/** `params` without a 2026-07-28 envelope in its `_meta` (progress tokens, trace context and the rest kept). */
function legacyParams(params: Params): Params {
  if (!hasClaim(params)) return params;
  const meta = withoutEnvelope(params._meta as Params);
  const { _meta: _m, ...rest } = params;
  return Object.keys(meta).length ? { ...rest, _meta: meta } : rest;
}
