/** @module A session as the traffic from upstream instances sees it: where untied messages can be delivered. */

import { isLogLevel, LOG_LEVELS, type LogLevel } from "../modern/wire.js";
import type { Signal } from "../wire/signal.js";

export { isLogLevel, LOG_LEVELS, type LogLevel } from "../modern/wire.js";

export type Params = Record<string, unknown>;

/** True when a message at `level` passes a session that asked for `wanted`. */
export function passes(level: unknown, wanted: LogLevel): boolean {
  const l = LOG_LEVELS.indexOf(isLogLevel(level) ? level : "info");
  return l >= LOG_LEVELS.indexOf(wanted);
}

export interface Peer {
  /** The level this client asked for (everything until it asks). */
  readonly logLevel: LogLevel;
  /**
   * Sends a notification that belongs to no request of this client: on the stream of its latest call to
   * `upstream` when one is in flight (it is this client's either way), else on its standalone stream.
   */
  notify(notification: { method: string; params?: Params }, upstream?: string): void;
  /** A server→client request that belongs to no call of this client (a per-session instance's, say). */
  ask(request: { method: string; params?: Params }, signal: Signal, upstream: string): Promise<Params>;
}
