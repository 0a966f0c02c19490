/**
 * @module A 2025 upstream (the `initialize` handshake, a session) on the one JSON-RPC peer: the handshake, lists,
 * forwarded requests (what the upstream ties to one of them goes to that call's handlers) and the untied rest
 * (server→client requests, notifications), with ping and a shared instance's roots answered here. A 2026-07-28
 * client's envelope, if the caller left it in `_meta`, never reaches a 2025 server (a dual-era one would take the
 * request for a 2026 one). No SDK at run time: the SDK's Client costs ~300 ms of CPU to import.
 */

import type { JSONRPCMessage, ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { Offer } from "../catalog/inventory.js";
import { hasClaim, withoutEnvelope } from "../modern/meta.js";
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "../protocol.js";
import { errors } from "../wire/errors.js";
import { type Notification, RpcPeer } from "../wire/peer.js";
import type { Signal } from "../wire/signal.js";
import type { Channel, ChannelEvents, ChannelSetup, Params } from "./channel.js";
import { answerItself, upstreamCapabilities } from "./client.js";
import type { ForwardOptions } from "./forward.js";
import type { TiedMessageExtra } from "./http-transport.js";
import { listOffer } from "./lists.js";
import { withTimeout } from "./util.js";

const LIST_CHANGED = /^notifications\/(tools|prompts|resources)\/list_changed$/;

/** Initializes a session on `setup.built` (within `timeoutMs`); throws when the upstream does not answer. */
export async function openLegacy(setup: ChannelSetup, timeoutMs: number): Promise<Channel> {
  const { spec, owned, events } = setup;
  const transport = setup.built.transport;
  let open = false;
  const peer = new RpcPeer((m) => transport.send(m as JSONRPCMessage), {
    request: (r, signal) => untiedRequest(setup, r, signal),
    notification: (n) => untiedNotification(events, n),
  });
  transport.onmessage = (m, extra) =>
    peer.receive(m as never, (extra as TiedMessageExtra | undefined)?.relatedRequestId);
  transport.onerror = () => {};
  transport.onclose = () => {
    peer.close(errors.connectionClosed("Connection closed"));
    if (open) events.onClosed();
  };
  let capabilities: ServerCapabilities = {};
  try {
    await withTimeout(
      (async () => {
        await transport.start();
        const result = await peer.request(
          "initialize",
          {
            protocolVersion: LATEST_PROTOCOL_VERSION,
            capabilities: upstreamCapabilities(spec, owned),
            clientInfo: setup.clientInfo,
          },
          { timeoutMs },
        );
        const version = result.protocolVersion;
        if (typeof version !== "string" || !SUPPORTED_PROTOCOL_VERSIONS.includes(version))
          throw new Error(`Server's protocol version is not supported: ${String(version)}`);
        const caps = result.capabilities;
        capabilities = (caps && typeof caps === "object" ? caps : {}) as ServerCapabilities;
        (transport as { setProtocolVersion?: (v: string) => void }).setProtocolVersion?.(version);
        await peer.notify("notifications/initialized");
      })(),
      timeoutMs,
      "initialize",
    );
  } catch (err) {
    await transport.close().catch(() => {});
    peer.close();
    throw err;
  }
  open = true;
  return {
    era: "2025",
    capabilities,
    request(method: string, params: Params, options: ForwardOptions, timeoutMs: number) {
      const tied = options.onServerRequest;
      return peer.request(method, legacyParams(params), {
        signal: options.signal,
        timeoutMs,
        onProgress: options.onProgress,
        onNotification: options.onNotification,
        onRequest: tied
          ? (request, signal) =>
              Promise.resolve(answerItself(spec, owned, request.method) ?? tied(request, signal))
          : undefined,
      });
    },
    async notify(notification) {
      await peer.notify(notification.method, notification.params);
    },
    listOffer(onSkipped): Promise<Offer> {
      return listOffer(
        (method, params) => peer.request(method, params, { timeoutMs }),
        capabilities,
        onSkipped,
      );
    },
    async close() {
      open = false;
      await transport.close().catch(() => {});
      peer.close();
    },
  };
}

/** A server→client request tied to no call: ping and a shared instance's roots here, the rest handed on. */
async function untiedRequest(setup: ChannelSetup, request: Notification, signal: Signal): Promise<unknown> {
  if (request.method === "ping") return {};
  const own = answerItself(setup.spec, setup.owned, request.method);
  if (own) return own;
  const handOn = setup.events.onServerRequest;
  if (!handOn) throw errors.methodNotFound(request.method);
  return handOn(request, signal);
}

/** A notification tied to no call: list changes read the lists again; progress of nobody's is dropped. */
function untiedNotification(events: ChannelEvents, n: Notification): void {
  if (n.method === "notifications/progress") return;
  if (LIST_CHANGED.test(n.method)) events.onListChanged();
  events.onNotification?.(n as never);
}

/** `params` without a 2026-07-28 envelope in its `_meta` (progress tokens, trace context and the rest kept). */
function legacyParams(params: Params): Params {
  if (!hasClaim(params)) return params;
  const meta = withoutEnvelope(params._meta as Params);
  const { _meta: _m, ...rest } = params;
  return Object.keys(meta).length ? { ...rest, _meta: meta } : rest;
}
