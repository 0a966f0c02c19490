/** @module What the request handlers of a session read and use: its selection, resolution, instances, client. */
import type { ClientCapabilities, RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { Envelope } from "../modern/meta.js";
import type { Resolution } from "../resolve.js";
import type { Selection } from "../selection.js";
import type { InstanceRef } from "../upstream/instance.js";
import type { HandleStore } from "./handles.js";
import type { Params, SessionHost, UpstreamLink } from "./host.js";
import type { LogLevel, Peer } from "./peer.js";

/** Who made a request, as far as answering it goes: the era, what it can be asked, which log lines it gets. */
export interface CallClient {
  readonly era: "2025" | "2026-07-28";
  /** 2025: the session's initialize; 2026-07-28: this request's envelope. */
  readonly capabilities: ClientCapabilities | undefined;
  /** The least severe log line it gets; undefined: none (a 2026-07-28 request without `logLevel`). */
  readonly logLevel: LogLevel | undefined;
  /** 2026-07-28: the request's envelope, as a 2026-07-28 upstream is to be sent it. */
  readonly envelope?: Envelope;
}

/** One client request being handled: its cancellation, and the stream its related messages ride on. */
export interface Call {
  readonly id: RequestId;
  readonly client: CallClient;
  readonly signal: AbortSignal;
  /** The HTTP request id (X-Request-Id) that ties its log lines together, when there is one. */
  readonly requestId?: string;
  /** Sends a notification that belongs to this request (progress, its log lines). */
  notify(notification: { method: string; params?: Params }): void;
  /** Sends a server→client request that belongs to this request, and waits for the client's answer. */
  ask(request: { method: string; params?: Params }, signal: AbortSignal): Promise<Params>;
}

export interface SessionState extends Peer {
  readonly host: SessionHost;
  readonly selection: Selection;
  readonly resolution: Resolution;
  readonly handles: HandleStore;
  /** A digest of the session id: what logs show. */
  readonly digest: string;
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
    signal: AbortSignal,
    upstream?: string,
  ): Promise<Params>;
}
