/** @module What the request handlers of a session read and use: its selection, resolution, instances, client. */

import type { ClientCapabilities, RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { Principal } from "../auth/types.js";
import type { Codec } from "../codec/codec.js";
import type { Envelope } from "../modern/meta.js";
import type { Resolution } from "../resolve.js";
import type { Selection } from "../selection.js";
import type { McpSpan } from "../tracing/types.js";
import type { InstanceRef } from "../upstream/instance.js";
import type { Signal } from "../wire/signal.js";
import type { Params, SessionHost, UpstreamLink } from "./host.js";
import type { LogLevel, Peer } from "./peer.js";

/** Who made a request, as far as answering it goes: its era's codec, what it declared, which log lines it gets. */
export interface CallClient {
  /** Its protocol era's codec: what it may ask, how answers read, whether it may be asked anything. */
  readonly codec: Codec;
  /** The revision it speaks: its session's negotiated one (2025), its envelope's (2026-07-28). */
  readonly protocolVersion: string | undefined;
  /** 2025: the session's initialize; 2026-07-28: this request's envelope. */
  readonly capabilities: ClientCapabilities | undefined;
  /** The least severe log line it gets; undefined: none (a 2026-07-28 request without `logLevel`). */
  readonly logLevel: LogLevel | undefined;
  /** 2026-07-28: the request's envelope, as a 2026-07-28 upstream is to be sent it. */
  readonly envelope?: Envelope;
  /**
   * The key per-client limits count this request under, when it is its own (a 2026-07-28 request over HTTP: the
   * context serving it may be shared by several clients); absent: its session's client.
   */
  readonly clientKey?: string | undefined;
  /**
   * The names this request's URL asked for that the config has not, when they are its own (a 2026-07-28 request
   * over HTTP: its context serves every URL with the same toolsets, `?only=a` and `?only=a,bogus` alike);
   * absent: its session's selection says them.
   */
  readonly unknown?: readonly string[] | undefined;
}

/** One client request being handled: its cancellation, and the stream its related messages ride on. */
export interface Call {
  readonly id: RequestId;
  readonly client: CallClient;
  readonly signal: Signal;
  /** The HTTP request id (X-Request-Id) that ties its log lines together, when there is one. */
  readonly requestId?: string | undefined;
  /** Its SERVER span (the no-op span when tracing is off): the parent of what is sent upstream for it. */
  readonly span: McpSpan;
  /**
   * The params as the client sent them, when the call relayed is another (call_tool runs the tool it names):
   * what a 2026-07-28 requestState is bound to, since the client retries its own request.
   */
  readonly sentParams?: Params | undefined;
  /** Sends a notification that belongs to this request (progress, its log lines). */
  notify(notification: { method: string; params?: Params }): void;
  /** Sends a server→client request that belongs to this request, and waits for the client's answer. */
  ask(request: { method: string; params?: Params }, signal: Signal): Promise<Params>;
}

export interface SessionState extends Peer {
  readonly host: SessionHost;
  /** Who opened it, as per-client limits count. */
  readonly client: string;
  readonly selection: Selection;
  readonly resolution: Resolution;
  /**
   * Whose captured values its calls use: a digest of the session id (a session), a keyed digest of the
   * credential values (a 2026-07-28 context); none for a 2026-07-28 context of callers without credentials.
   */
  readonly stateOwner: string | undefined;
  /** A digest of the session id: what logs show. */
  readonly digest: string;
  /** Who opened the session (its initialize's token: subject, scopes, claims; never the token). */
  readonly principal?: Principal | undefined;
  /** Who owns what it keeps and what its 2026-07-28 request states are bound to: a digest. */
  readonly owner: string;
  readonly clientInfo: { readonly name: string; readonly version: string } | undefined;
  logLevel: LogLevel;
  readonly clientCapabilities: ClientCapabilities | undefined;
  /** The instance this session uses for an upstream. */
  ref(upstream: string): InstanceRef;
  link(upstream: string): UpstreamLink;
  /** Marks `call` as this session's latest call to an upstream until the returned function is called. */
  track(upstream: string, call: Call): () => void;
  /** Sends a server→client request on the standalone stream (tied to no call) and waits for the answer. */
  standalone(
    request: { method: string; params?: Params },
    signal: Signal,
    upstream?: string,
  ): Promise<Params>;
}

/** Who a call counts against (SPEC §7.6): the request's own client (a 2026-07-28 one), else its session's. */
export function clientOf(s: { readonly client: string }, call: { readonly client: CallClient }): string {
  return call.client.clientKey ?? s.client;
}
