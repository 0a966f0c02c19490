/**
 * @module One started upstream instance as the connection drives it, whatever its era: the 2025 channel (the SDK
 * client after `initialize`, our forwarder below it) or the 2026-07-28 one (no handshake, no session, an envelope
 * on every request). The connection keeps the lifecycle (start, backoff, refresh, replay); a channel the wire.
 */

import type { Notification, ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { Offer } from "../catalog/inventory.js";
import type { Upstream } from "../catalog/types.js";
import type { Logger } from "../log.js";
import type { Signal } from "../wire/signal.js";
import type { Era } from "./era.js";
import type { ForwardOptions } from "./forward.js";
import type { BuiltTransport } from "./transport.js";

export type Params = Record<string, unknown>;

export interface Channel {
  readonly era: Era;
  readonly capabilities: ServerCapabilities | undefined;
  /**
   * Forwards one request (errors as the upstream sent them; results as they came, stamps included), failed after
   * `timeoutMs` without an answer or progress.
   */
  request(method: string, params: Params, options: ForwardOptions, timeoutMs: number): Promise<Params>;
  notify(notification: { method: string; params?: Params }): Promise<void>;
  /** Every list the upstream's capabilities promise, every page; `onSkipped` hears an optional list that failed. */
  listOffer(onSkipped: (method: string, reason: string) => void): Promise<Offer>;
  close(): Promise<void>;
}

/** What a channel tells its connection. */
export interface ChannelEvents {
  /** The channel ended on its own (the process exited, the server closed the connection). */
  onClosed(): void;
  /** A list of the upstream changed: the connection reads its lists again. */
  onListChanged(): void;
  /** Any notification that no forwarded call took (list changes included). */
  onNotification?(notification: Notification): void;
  /** A server→client request that no forwarded call took (2025 only). */
  onServerRequest?(request: { method: string; params?: unknown }, signal: Signal): Promise<unknown>;
}

/** What opening a channel takes. */
export interface ChannelSetup {
  readonly spec: Upstream;
  /** It serves one client by construction (`servesOneClient`). */
  readonly owned: boolean;
  readonly built: BuiltTransport;
  readonly clientInfo: { readonly name: string; readonly version: string };
  readonly events: ChannelEvents;
  readonly logger: Logger;
}
