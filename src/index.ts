/**
 * @module The library API: load a config, then mount the proxy in a Node server you already run
 * (node:http, Express, Fastify's raw request, Hono's Node adapter).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Principal } from "./auth/types.js";
import type { Limits } from "./catalog/limits.js";
import type { Catalog, Upstream } from "./catalog/types.js";
import type { FdGauge } from "./door/fd-headroom.js";
import { createFront, type Front } from "./door/front.js";
import { createHttpHandler, defaultHandlerOptions, type HandlerOptions } from "./http/handler.js";
import { type WebRequestInfo, webRequest } from "./http/web.js";
import { createLogger, type Logger, silentLogger } from "./log.js";
import type { UpstreamOAuth } from "./proxy/upstream-oauth.js";
import type { StateStore } from "./state/types.js";
import type { Tracing } from "./tracing/types.js";
import { closeAgent } from "./upstream/transport.js";
import { VERSION } from "./version.js";

export { parsePrincipalJson } from "./auth/requirements.js";
export type { AuthConfig, Principal, Requires } from "./auth/types.js";
export { compileTexts, loadCatalog } from "./catalog/load.js";
export type { Catalog, Member, Toolset, Upstream } from "./catalog/types.js";
export { type ConfigError, formatConfigError } from "./config/errors.js";
export type { FdGauge } from "./door/fd-headroom.js";
export { createLogger, type Logger } from "./log.js";
export { openTokenStore } from "./oauth/store/open.js";
export { Tickets } from "./oauth/ticket.js";
export { UpstreamOAuth, type UpstreamOAuthOptions } from "./proxy/upstream-oauth.js";
export type { ToolsetsReport } from "./report.js";
export type { Resolution, Route } from "./resolve.js";
export { parseQuery, type Selection, select } from "./selection.js";
export { openStateStore } from "./state/open.js";
export type { StateStore } from "./state/types.js";
export { tracingFor } from "./tracing/create.js";
export type { Tracing } from "./tracing/types.js";
export type { Front };

export interface ToolpacksOptions extends Partial<HandlerOptions> {
  /** Idle sessions are closed after this long (default 30 min). */
  readonly sessionIdleMs?: number;
  /** Shared by replicas: session ids are signed and any replica can rebuild a session from one. */
  readonly sessionSecret?: string;
  /** Limits that override the config's `limits:` (`{ sessions, sessionsPerClient, batch, … }`). */
  readonly limits?: Partial<Limits>;
  /** Proxies (addresses or ADDRESS/PREFIX) whose X-Forwarded-For names the client, for per-client limits. */
  readonly trustedProxies?: readonly string[];
  /**
   * Open file descriptors and their limit, for the headroom check (default: this process's, read from /proc on
   * Linux; elsewhere no check). An embedder that counts them itself, or a test, passes its own.
   */
  readonly fds?: FdGauge;
  /** serverInfo.name (default: the config's name). */
  readonly name?: string;
  /** What a URL naming nothing gets, in URL spelling (`only=docs`). */
  readonly defaultSelection?: string;
  /** Query keys that are not toolset names. */
  readonly ignoreQueryKeys?: readonly string[];
  /** Offer list_server_toolsets (default true). */
  readonly toolsetsTool?: boolean;
  /** ttlMs of lists and `server/discover` for 2026-07-28 clients (default 60,000). */
  readonly cacheTtlMs?: number;
  /** Where logs go (default: JSON lines on stderr at info; `false` for none). */
  readonly logger?: Logger | false;
  /**
   * The state store (default: memory with the catalog's budgets). Required when the catalog's `state.store`
   * names Redis: `state: await openStateStore(catalog.state)` (close it after `close()`).
   */
  readonly state?: StateStore;
  /** Tracing (default off): `tracing: await tracingFor(catalog.tracing, version)`. */
  readonly tracing?: Tracing;
  /** For upstreams with `oauth:`: their tokens and the /oauth/* pages (see docs/oauth-client.md). */
  readonly oauth?: UpstreamOAuth;
  /**
   * Upstreams that run in this process (an MCP server of your own, a test's): for a spec it returns a transport,
   * no process is spawned and no connection made. Each instance asks for its own (per-session ones included).
   */
  readonly upstreamTransport?: (spec: Upstream) => Transport | undefined;
}

export interface Toolpacks {
  /** For node:http: handles the request and resolves true, or resolves false when the path is not ours. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
  /**
   * A Web `Request` in, a `Response` out, without a socket (as hono's `app.request`, fastify's `inject`): for a
   * fetch-style server, a worker, or a test. `address`: the peer it comes from (per-client limits); 127.0.0.1.
   */
  request(request: Request, info?: WebRequestInfo): Promise<Response>;
  /** For Express-style stacks: `app.use(toolpacks.middleware)`; requests that are not ours go to `next()`. */
  middleware(req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void): void;
  /**
   * Which toolsets a request to this URL would get, without starting or building anything. With `auth:`, for
   * this principal (see `parsePrincipalJson` and `Principal`): the toolsets it does not meet are `forbidden`,
   * never active; without a principal, no gated toolset is active.
   */
  activeFor(
    url: string,
    principal?: Principal,
  ): { active: readonly string[]; unknown: readonly string[]; forbidden: readonly string[] };
  /** The door into the serving core, as the HTTP edge uses it (SPEC §8.4). */
  readonly front: Front;
  /** Closes sessions and upstream clients, waiting for child processes to exit. */
  close(): Promise<void>;
}

/** Creates the proxy for a compiled catalog (see `loadCatalog`). Nothing starts until a request needs it. */
export function createToolpacks(catalog: Catalog, options: ToolpacksOptions = {}): Toolpacks {
  const logger = options.logger === false ? silentLogger : (options.logger ?? createLogger());
  const front = createFront(
    catalog,
    {
      name: options.name ?? catalog.name,
      version: VERSION,
      ...(options.defaultSelection !== undefined ? { defaultSelection: options.defaultSelection } : {}),
      ...(options.ignoreQueryKeys ? { ignoreKeys: options.ignoreQueryKeys } : {}),
      toolsetsTool: options.toolsetsTool ?? true,
      logger,
      capture: options.stateless !== true,
      ...(options.state ? { state: options.state } : {}),
      ...(options.tracing ? { tracing: options.tracing } : {}),
      ...(options.sessionSecret ? { stateSecret: options.sessionSecret } : {}),
      ...(options.cacheTtlMs !== undefined ? { cacheTtlMs: options.cacheTtlMs } : {}),
      ...(options.oauth ? { oauth: options.oauth } : {}),
      ...(options.upstreamTransport ? { upstreamTransport: options.upstreamTransport } : {}),
    },
    {
      path: options.path ?? defaultHandlerOptions.path,
      sessionIdleMs: options.sessionIdleMs ?? 30 * 60_000,
      sessionSecret: options.sessionSecret,
      limits: options.limits,
      trustedProxies: options.trustedProxies,
      fds: options.fds,
    },
  );
  const handlerOptions: Partial<HandlerOptions> = {};
  for (const key of Object.keys(defaultHandlerOptions) as (keyof HandlerOptions)[]) {
    if (options[key] !== undefined) (handlerOptions as Record<string, unknown>)[key] = options[key];
  }
  for (const key of ["allowedHosts", "allowedOrigins"] as const) {
    if (options[key] !== undefined) (handlerOptions as Record<string, unknown>)[key] = options[key];
  }
  const pages = options.oauth?.routes();
  const handler = createHttpHandler(front, { ...(pages ? { oauthPages: pages } : {}), ...handlerOptions });
  return {
    front,
    handle: handler,
    request: (request, info) => webRequest(handler, request, info),
    middleware: (req, res, next) => {
      handler(req, res).then((handled) => (handled ? undefined : next()), next);
    },
    activeFor: (url, principal) => front.activeFor(url, principal),
    close: async () => {
      await front.close();
      await closeAgent();
    },
  };
}
