/** @module What an upstream connection is given: its hooks into the pool, its kind, credentials and values. */

import type { Notification } from "@modelcontextprotocol/sdk/types.js";
import type { UpstreamState } from "../catalog/inventory.js";
import type { Upstream } from "../catalog/types.js";
import type { InstanceValues } from "../config/instance-vars.js";
import type { Logger } from "../log.js";
import type { Signal } from "../wire/signal.js";
import type { EraCache } from "./era.js";
import type { UpstreamAuth } from "./http-auth.js";
import type { Variant } from "./instance.js";

export interface ConnectionHooks {
  /** The tool list of this upstream changed (after a refresh that found a different list). */
  onInventory?(name: string, state: UpstreamState): void;
  /** Any notification the upstream sends (list changes, logging, progress, resource updates). */
  onNotification?(name: string, notification: Notification): void;
  /** Observability: an upstream started again after a failure; its lists were read. */
  onRestart?(name: string): void;
  onListed?(name: string): void;
  /** A limit of SPEC §7.6 refused something (`upstream_calls_per_client`): counted and said by the pool. */
  onLimited?(name: string, limit: string, fields: Record<string, unknown>): void;
  /** A server→client request not tied to a forwarded request (roots from config are answered before this). */
  onServerRequest?(
    name: string,
    request: { method: string; params?: unknown },
    signal: Signal,
  ): Promise<unknown>;
}

/** Transports for upstreams that run in process, by their spec; undefined for one it does not provide. */
export type UpstreamTransports = (
  spec: Upstream,
) => import("@modelcontextprotocol/sdk/shared/transport.js").Transport | undefined;

export interface ConnectionOptions {
  readonly clientName: string;
  readonly clientVersion: string;
  readonly logger: Logger;
  readonly hooks: ConnectionHooks;
  /**
   * The instance serves one client by construction (`servesOneClient`): it declares roots and its client answers
   * them; otherwise toolpacks answers roots/list from the config.
   */
  readonly owned?: boolean;
  /** Credentials of this instance (forwarded headers or header_env); none for the shared one. */
  readonly variant?: Variant;
  /** The values of `${instance.dir}` and `${instance.id}` for this instance (made on first start). */
  readonly instance?: () => InstanceValues | undefined;
  /** For logs: which instance this is (never the credential itself). */
  readonly label?: string;
  /**
   * The transport of an upstream that runs in process (a test, an embedder): when it gives one, no process is
   * spawned and no HTTP connection is made for that upstream.
   */
  readonly transport?: UpstreamTransports | undefined;
  /** Removes configured secrets and credential values from text the upstream produced (stderr, errors). */
  readonly redact?: (text: string) => string;
  readonly now?: () => number;
  /** The era verdicts of this process (the pool's); a connection without one keeps its own. */
  readonly eras?: EraCache;
  /** OAuth towards an HTTP upstream: this instance's tokens (shared, or one principal's). */
  readonly auth?: UpstreamAuth;
}
