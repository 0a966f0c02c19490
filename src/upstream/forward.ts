/**
 * @module What a forwarded request takes besides its method and params: the caller's cancellation and timeout,
 * and where what the upstream ties to the call goes (its progress, log lines and server→client requests: they
 * belong to the client that caused the call). The upstream connection's peer (wire/peer.ts) carries them out.
 */

import type { Implementation } from "../modern/meta.js";
import type { LogLevel } from "../modern/wire.js";
import type { Signal } from "../wire/signal.js";

type Params = Record<string, unknown>;
type ServerRequest = { method: string; params?: Params };

/**
 * The per-request envelope a 2026-07-28 upstream is sent for this call (the downstream client's, when a bridge
 * forwards it verbatim); without one, toolpacks' own. A 2025 upstream ignores it.
 */
interface RequestEnvelope {
  readonly clientCapabilities: Readonly<Record<string, unknown>>;
  /** Absent: toolpacks' own client info. */
  readonly clientInfo?: Implementation;
  /** Absent: no log lines for this request (the upstream must send none). */
  readonly logLevel?: LogLevel;
}

export interface ForwardOptions {
  readonly signal?: Signal | undefined;
  /** Fails the call (and cancels it upstream) after this long without a result or progress. */
  readonly timeoutMs?: number | undefined;
  /** Progress of this call, delivered synchronously in arrival order (the last one included). */
  readonly onProgress?: ((params: Params) => void) | undefined;
  /** A notification the upstream sent on this call's own response stream (a log line, say). */
  readonly onNotification?: ((notification: { method: string; params?: Params }) => void) | undefined;
  /** A server→client request the upstream sent on this call's own response stream. */
  readonly onServerRequest?: ((request: ServerRequest, signal: Signal) => Promise<Params>) | undefined;
  /** 2026-07-28 upstreams: the envelope of this request (see RequestEnvelope). */
  readonly envelope?: RequestEnvelope | undefined;
  /**
   * The client the call is made for (the key per-client limits count, SPEC §7.6); absent for toolpacks' own
   * requests. Over HTTP, one client's open calls on one instance are bounded so that they never take the
   * connections other clients' calls need.
   */
  readonly client?: string | undefined;
}
