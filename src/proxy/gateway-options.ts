/** @module What the serving core is built with, besides its catalog. */
import type { Logger } from "../log.js";
import type { UpstreamTransports } from "../upstream/connection-options.js";
import type { ServingOptions } from "./state-host.js";
import type { UpstreamOAuth } from "./upstream-oauth.js";

export interface GatewayOptions extends ServingOptions {
  readonly name: string;
  readonly version: string;
  /** What a URL naming nothing gets, in URL spelling. */
  readonly defaultSelection?: string;
  readonly ignoreKeys?: readonly string[];
  /** Offer list_server_toolsets (default true). */
  readonly toolsetsTool: boolean;
  readonly logger: Logger;
  /** Sessions keep captured values (false when each lasts one request and no shared store exists). */
  readonly capture?: boolean;
  /** Shared by replicas: 2026-07-28 request states one replica signs, another verifies. Else a random key. */
  readonly stateSecret?: string;
  /** ttlMs of lists and `server/discover` for 2026-07-28 clients (default 60 s). */
  readonly cacheTtlMs?: number;
  readonly now?: () => number;
  /**
   * The process serves exactly one client (`serve --transport stdio`): every upstream instance is that client's,
   * so what an upstream sends tied to no call (sampling, elicitation, roots, log lines) goes to it (SPEC §10.5).
   */
  readonly oneClient?: boolean;
  /** Upstreams that run in process (an embedder's servers, a test's): their transports, by spec. */
  readonly upstreamTransport?: UpstreamTransports;
  /** OAuth towards HTTP upstreams with `oauth:` (tokens per instance, flows, renewals). */
  readonly oauth?: UpstreamOAuth;
}
