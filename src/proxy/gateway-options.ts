/** @module What the serving core is built with, besides its catalog. */
import type { Logger } from "../log.js";

export interface GatewayOptions {
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
}
