/**
 * @module What a session needs from the process that hosts it, and nothing more: the upstream instances it
 * may talk to, the catalog's figures, metrics, logs and the shared traffic bookkeeping. The gateway
 * implements it; tests implement it with fakes. A session never sees the gateway itself.
 */

import type { ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { CallAudit } from "../audit.js";
import type { Upstream } from "../catalog/types.js";
import type { Logger } from "../log.js";
import type { Outcome } from "../metrics.js";
import type { RequestStateCodec } from "../modern/request-state.js";
import type { Tracing } from "../tracing/types.js";
import type { ForwardOptions } from "../upstream/forward.js";
import type { InstanceRef } from "../upstream/instance.js";
import type { Signal } from "../wire/signal.js";
import type { BridgeTable } from "./bridge.js";
import type { HandleStore } from "./handles.js";
import type { LogLevel, Params, Peer } from "./peer.js";
import type { ToolRegistries } from "./tools/registry.js";

export type { Params } from "./peer.js";

/** One upstream instance as a session uses it. */
export interface UpstreamLink {
  readonly capabilities: ServerCapabilities | undefined;
  /** The instance serves one client by construction (`servesOneClient`): its roots are that client's. */
  readonly owned: boolean;
  /** The protocol era the instance speaks, once known (a 2026-07-28 upstream answers `input_required`). */
  readonly era?: "2025" | "2026-07-28" | undefined;
  request(method: string, params: Params, options?: ForwardOptions): Promise<Params>;
  notify(notification: { method: string; params?: Params }): Promise<void>;
}

/** Shared bookkeeping of what upstream instances send to sessions (see traffic.ts). */
export interface SessionTraffic {
  /** Subscribes once upstream per URI however many sessions ask; true when the upstream must be asked. */
  subscribe(ref: InstanceRef, uri: string, peer: Peer): boolean;
  /** True when the last subscriber left (the upstream must be told). */
  unsubscribe(ref: InstanceRef, uri: string, peer: Peer): boolean;
  /** The most verbose level any session using the instance wants; recorded as the one sent upstream. */
  upstreamLevel(ref: InstanceRef): LogLevel;
  /** The level to send before a call of a session that wants `wanted`, if the upstream was left quieter. */
  levelToRaise(ref: InstanceRef, wanted: LogLevel): LogLevel | undefined;
  /** Marks a call of `peer` in flight on an instance; returns the function that ends it. */
  begin(ref: InstanceRef, peer: Peer): () => void;
  /** A URL elicitation went to `peer`: its completion notification, which names the id, goes there too. */
  elicited(ref: InstanceRef, elicitationId: string, peer: Peer): void;
}

interface CallFigures {
  /**
   * `subject`: the caller as logs write it (bounded to a number of series by the metrics); `key`: the call's route
   * object, by which its series are found again.
   */
  recordCall(
    toolset: string,
    tool: string,
    upstream: string,
    outcome: Outcome,
    seconds: number,
    subject?: string,
    key?: object,
  ): void;
}

/** OAuth towards upstreams, as a session uses it when a call meets "authorization required". */
export interface SessionAuthorization {
  /** The upstream an exact tool member of `toolset` would route `tool` to (its tools may be unlisted yet). */
  upstreamOf(toolset: string, tool: string): string | undefined;
  /** Resolves once `ref` is authorized and its sessions were resolved again; rejects on abort or timeout. */
  wait(ref: InstanceRef, signal: Signal, timeoutMs: number): Promise<void>;
}

export interface SessionHost {
  readonly serverInfo: { readonly name: string; readonly version: string };
  readonly logger: Logger;
  readonly metrics: CallFigures;
  readonly traffic: SessionTraffic;
  /** Who made each call, written to the audit log (absent: no audit, subjects written as they are). */
  readonly audit?: CallAudit;
  /** Captured values are kept per session (false when sessions last one request: stateless). */
  readonly capture: boolean;
  /** Captured values of every session and context, in the state store (memory or Redis). */
  readonly handles: HandleStore;
  /** Spans per request; the no-op tracing when off. */
  readonly tracing: Tracing;
  /** How long a 2026-07-28 client may reuse a list or `server/discover` (ttlMs), when nothing says less. */
  readonly cacheTtlMs: number;
  /** 2025 upstream calls parked for 2026-07-28 clients (bridge B3), on this replica. */
  readonly bridges: BridgeTable;
  /** Signs and opens the `requestState` of 2026-07-28 retries (replicas that share the key verify each other's). */
  readonly requestStates: RequestStateCodec;
  link(ref: InstanceRef): UpstreamLink;
  upstream(name: string): Upstream | undefined;
  /** The tools each resolution offers, upstream and built-in (built-ins are plugged in here, not branched on). */
  readonly tools: ToolRegistries;
  now(): number;
  /** Ends a session: it leaves the registry, its instances are released (idempotent). */
  closeSession(session: import("./session.js").Session): Promise<void>;
  /** Present when some upstream uses OAuth. */
  readonly authorization?: SessionAuthorization;
}
