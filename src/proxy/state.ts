/** @module What the request handlers of a session read and use: its selection, resolution, instances, client. */
import type { ClientCapabilities, RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { Resolution } from "../resolve.js";
import type { Selection } from "../selection.js";
import type { McpSpan } from "../tracing/types.js";
import type { InstanceRef } from "../upstream/instance.js";
import type { Params, SessionHost, UpstreamLink } from "./host.js";
import type { LogLevel, Peer } from "./peer.js";

/** One client request being handled: its cancellation, and the stream its related messages ride on. */
export interface Call {
  readonly id: RequestId;
  readonly signal: AbortSignal;
  /** The HTTP request id (X-Request-Id) that ties its log lines together, when there is one. */
  readonly requestId?: string;
  /** Its SERVER span (the no-op span when tracing is off): the parent of what is sent upstream for it. */
  readonly span: McpSpan;
  /** Sends a notification that belongs to this request (progress, its log lines). */
  notify(notification: { method: string; params?: Params }): void;
  /** Sends a server→client request that belongs to this request, and waits for the client's answer. */
  ask(request: { method: string; params?: Params }, signal: AbortSignal): Promise<Params>;
}

export interface SessionState extends Peer {
  readonly host: SessionHost;
  readonly selection: Selection;
  readonly resolution: Resolution;
  /** Whose captured values this session's calls use: a digest of the session id (2025 sessions). */
  readonly stateOwner: string;
  /** A digest of the session id: what logs show. */
  readonly digest: string;
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
