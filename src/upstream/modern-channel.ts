/**
 * @module A 2026-07-28 upstream: no `initialize`, no session. Every request carries an envelope in `_meta`
 * (toolpacks' own, or the one the caller passes: a bridge forwards a 2026 client's verbatim); over HTTP the
 * standard headers and the `Mcp-Param-*` of the tool's `x-mcp-header` annotations, and a cancelled request's
 * stream is closed; over stdio a cancellation is `notifications/cancelled`. What the 2025 wire did with methods of
 * its own is done here: `logging/setLevel` sets the `logLevel` of later requests, `resources/subscribe` and
 * `unsubscribe` change the one `subscriptions/listen` stream, `ping` is answered at once. Results come back as
 * they are (`resultType`, `input_required`, the serverInfo stamp): the session layer decides what its client sees.
 */
import type { ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { Offer } from "../catalog/inventory.js";
import { type ParamHeader, scanParamHeaders } from "../modern/headers.js";
import { envelopeMeta, type Implementation } from "../modern/meta.js";
import { isLogLevel, isRecord, type LogLevel } from "../modern/wire.js";
import { errors } from "../wire/errors.js";
import { type Notification, RpcPeer } from "../wire/peer.js";
import { upstreamCapabilities } from "./capabilities.js";
import type { Channel, ChannelSetup, Params } from "./channel.js";
import type { ForwardOptions } from "./forward.js";
import type { TiedMessageExtra } from "./http-transport.js";
import { Listener } from "./listen.js";
import { listOffer } from "./lists.js";
import { type Discover, readDiscover } from "./probe.js";

/** The longest a listen stream stays open without a word (setTimeout's limit): it ends when we close it. */
const LISTEN_TIMEOUT_MS = 2_147_483_647;

type Sent = ForwardOptions & { readonly timeoutMs: number; readonly id?: string };

/**
 * Starts the channel on `setup.built`: adopts the probe's `discover`, or asks `server/discover` itself (a pinned
 * era) within `timeoutMs`; throws when the upstream does not speak `version`.
 */
export async function openModern(
  setup: ChannelSetup,
  version: string,
  discover: Discover | undefined,
  timeoutMs: number,
): Promise<Channel> {
  const channel = new ModernChannel(setup, version, timeoutMs);
  try {
    await channel.start(discover);
  } catch (err) {
    await channel.close();
    throw err;
  }
  return channel;
}

class ModernChannel implements Channel {
  readonly era = "2026-07-28" as const;
  private readonly peer: RpcPeer;
  private discover: Discover | undefined;
  /** The level a 2025 session asked for with logging/setLevel: sent with requests that carry no envelope. */
  private level: LogLevel | undefined;
  /** The `x-mcp-header` parameters of each listed tool (HTTP), by the upstream's own tool name. */
  private headersOf = new Map<string, readonly ParamHeader[]>();
  /** stdio: requests in flight that asked for log lines (a log line on the pipe belongs to the one such call). */
  private readonly logging = new Set<ForwardOptions>();
  private listener: Listener | undefined;
  private live = false;
  private readonly info: Implementation;
  private readonly caps: Record<string, unknown>;

  constructor(
    private readonly setup: ChannelSetup,
    private readonly version: string,
    private readonly timeoutMs: number,
  ) {
    this.info = { ...setup.clientInfo };
    this.caps = upstreamCapabilities(setup.spec, setup.owned) as Record<string, unknown>;
    this.peer = new RpcPeer((m) => setup.built.transport.send(m as never), {
      // A 2026-07-28 server sends no requests (they are input_required results now).
      request: (r) => Promise.reject(errors.methodNotFound(r.method, "2026-07-28")),
      notification: (n) => this.untied(n),
    });
  }

  get capabilities(): ServerCapabilities | undefined {
    return this.discover?.capabilities as ServerCapabilities | undefined;
  }

  private get http(): boolean {
    return this.setup.spec.transport === "http";
  }

  async start(discover: Discover | undefined): Promise<void> {
    const { built, events } = this.setup;
    const transport = built.transport;
    built.speakModern?.(this.version, (tool) => this.headersOf.get(tool) ?? []);
    transport.onmessage = (m, extra) =>
      this.peer.receive(m as never, (extra as TiedMessageExtra | undefined)?.relatedRequestId);
    transport.onerror = (err) => this.setup.logger.debug("upstream transport error", { reason: err.message });
    transport.onclose = () => {
      this.peer.close(errors.connectionClosed("Connection closed"));
      this.listener?.close();
      if (!this.live) return;
      this.live = false;
      events.onClosed();
    };
    await transport.start();
    this.discover = discover ?? (await this.askDiscover());
    this.live = true;
    this.listener = new Listener({
      capabilities: this.capabilities ?? {},
      open: (id, filter, signal, onNotification) =>
        this.send(
          "subscriptions/listen",
          { notifications: filter },
          {
            id,
            signal,
            onNotification,
            timeoutMs: LISTEN_TIMEOUT_MS,
          },
        ),
      onListChanged: events.onListChanged,
      onNotification: (n) => events.onNotification?.(n as never),
      onRefused: (reason) => this.setup.logger.warn("no list changes from this upstream", { reason }),
    });
    this.listener.start();
  }

  private async askDiscover(): Promise<Discover> {
    const found = readDiscover(await this.send("server/discover", {}, { timeoutMs: this.timeoutMs }));
    if (!found) throw new Error("server/discover answered something that is no DiscoverResult");
    if (!found.supportedVersions.includes(this.version)) {
      throw new Error(
        `the upstream does not speak ${this.version} (it lists ${found.supportedVersions.join(", ")}); set its protocol to auto or "2025"`,
      );
    }
    return found;
  }

  request(method: string, params: Params, options: ForwardOptions, timeoutMs: number): Promise<Params> {
    switch (method) {
      case "logging/setLevel":
        this.level = isLogLevel(params.level) ? params.level : undefined;
        return Promise.resolve({});
      case "resources/subscribe":
      case "resources/unsubscribe":
        return this.subscription(method === "resources/subscribe", params.uri, timeoutMs);
      case "ping":
        return Promise.resolve({});
    }
    return this.send(method, params, { ...options, timeoutMs });
  }

  private async subscription(on: boolean, uri: unknown, timeoutMs: number): Promise<Params> {
    if (!this.capabilities?.resources?.subscribe || !this.listener) {
      throw errors.methodNotFound(
        "resources/subscribe",
        "the upstream does not offer resource subscriptions",
      );
    }
    if (typeof uri !== "string") throw errors.invalidParams("uri must be a string");
    await (on ? this.listener.subscribe(uri, timeoutMs) : this.listener.unsubscribe(uri, timeoutMs));
    return {};
  }

  /** One enveloped request: the caller's envelope, else toolpacks' own (with the level a session set). */
  private async send(method: string, params: Params, options: Sent): Promise<Params> {
    const { envelope, onServerRequest: _none, ...rest } = options;
    const logLevel = envelope ? envelope.logLevel : this.level;
    const meta = envelopeMeta(
      {
        protocolVersion: this.version,
        clientCapabilities: envelope?.clientCapabilities ?? this.caps,
        clientInfo: envelope?.clientInfo ?? this.info,
        ...(logLevel ? { logLevel } : {}),
      },
      isRecord(params._meta) ? params._meta : {},
    );
    const asking = logLevel && !this.http && rest.onNotification ? rest : undefined;
    if (asking) this.logging.add(asking);
    try {
      return await this.peer.request(method, { ...params, _meta: meta }, rest);
    } finally {
      if (asking) this.logging.delete(asking);
    }
  }

  /** A notification no forwarded call took: listen traffic, a log line on the pipe, the rest handed on. */
  private untied(n: Notification): void {
    if (n.method === "notifications/progress") return;
    if (this.listener?.receive(n)) return;
    if (n.method === "notifications/message" && this.logging.size === 1) {
      const [only] = this.logging;
      only!.onNotification!(n);
      return;
    }
    this.setup.events.onNotification?.(n as never);
  }

  /** A 2026 client sends no notifications but cancellations, which the peer makes itself. */
  async notify(): Promise<void> {}

  async listOffer(onSkipped: (method: string, reason: string) => void): Promise<Offer> {
    const request = (method: string, params: Params) =>
      this.send(method, params, { timeoutMs: this.timeoutMs });
    const offer = await listOffer(request, this.capabilities ?? {}, onSkipped);
    const headersOf = new Map<string, readonly ParamHeader[]>();
    const tools = offer.tools.filter((tool) => {
      const scan = scanParamHeaders(tool.inputSchema);
      // The spec allows string, integer and boolean only (server/tools §x-mcp-header; the conformance suite's
      // http-invalid-tool-headers requires a client to drop a `number` one too).
      const number = scan.ok ? scan.params.find((p) => p.type === "number") : undefined;
      if (scan.ok && !number) {
        if (scan.params.length) headersOf.set(tool.name, scan.params);
        return true;
      }
      // A client over HTTP must drop a tool whose x-mcp-header annotations are invalid (server/tools).
      if (!this.http) return true;
      const reason = scan.ok ? `${number?.path.join(".")}: x-mcp-header on a number` : scan.reason;
      this.setup.logger.warn("tool dropped: its x-mcp-header annotations are invalid", {
        tool: tool.name,
        reason,
      });
      return false;
    });
    this.headersOf = headersOf;
    return { ...offer, tools };
  }

  async close(): Promise<void> {
    this.live = false;
    this.listener?.close();
    await this.setup.built.transport.close().catch(() => {});
    this.peer.close();
  }
}
