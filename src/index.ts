/**
 * @module The library API: load a config, then mount the proxy in a Node server you already run
 * (node:http, Express, Fastify's raw request, Hono's Node adapter).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Catalog } from "./catalog/types.js";
import { createHttpHandler, defaultHandlerOptions, type HandlerOptions } from "./http/handler.js";
import { createLogger, type Logger, silentLogger } from "./log.js";
import { Gateway } from "./proxy/gateway.js";
import { closeAgent } from "./upstream/transport.js";
import { VERSION } from "./version.js";

export { compileTexts, loadCatalog } from "./catalog/load.js";
export type { Catalog, Member, Toolset, Upstream } from "./catalog/types.js";
export { type ConfigError, formatConfigError } from "./config/errors.js";
export { createLogger, type Logger } from "./log.js";
export type { ToolsetsReport } from "./report.js";
export type { Resolution, Route } from "./resolve.js";
export { parseQuery, type Selection, select } from "./selection.js";
export { Gateway };

export interface ToolpacksOptions extends Partial<HandlerOptions> {
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
}

export interface Toolpacks {
  /** For node:http: handles the request and resolves true, or resolves false when the path is not ours. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
  /** For Express-style stacks: `app.use(toolpacks.middleware)`; requests that are not ours go to `next()`. */
  middleware(req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void): void;
  /** Which toolsets a request to this URL would get, without starting or building anything. */
  activeFor(url: string): { active: readonly string[]; unknown: readonly string[] };
  /** The serving core (sessions, pool, metrics), for advanced use. */
  readonly gateway: Gateway;
  /** Closes sessions and upstream clients, waiting for child processes to exit. */
  close(): Promise<void>;
}

/** Creates the proxy for a compiled catalog (see `loadCatalog`). Nothing starts until a request needs it. */
export function createToolpacks(catalog: Catalog, options: ToolpacksOptions = {}): Toolpacks {
  const logger = options.logger === false ? silentLogger : (options.logger ?? createLogger());
  const gateway = new Gateway(catalog, {
    name: options.name ?? catalog.name,
    version: VERSION,
    ...(options.defaultSelection !== undefined ? { defaultSelection: options.defaultSelection } : {}),
    ...(options.ignoreQueryKeys ? { ignoreKeys: options.ignoreQueryKeys } : {}),
    toolsetsTool: options.toolsetsTool ?? true,
    logger,
    capture: options.stateless !== true,
    ...(options.sessionSecret ? { stateSecret: options.sessionSecret } : {}),
    ...(options.cacheTtlMs !== undefined ? { cacheTtlMs: options.cacheTtlMs } : {}),
  });
  const handlerOptions: Partial<HandlerOptions> = {};
  for (const key of Object.keys(defaultHandlerOptions) as (keyof HandlerOptions)[]) {
    if (options[key] !== undefined) (handlerOptions as Record<string, unknown>)[key] = options[key];
  }
  for (const key of ["allowedHosts", "allowedOrigins", "sessionSecret"] as const) {
    if (options[key] !== undefined) (handlerOptions as Record<string, unknown>)[key] = options[key];
  }
  const handler = createHttpHandler(gateway, handlerOptions);
  return {
    gateway,
    handle: handler,
    middleware: (req, res, next) => {
      handler(req, res).then((handled) => (handled ? undefined : next()), next);
    },
    activeFor: (url) => {
      const q = url.indexOf("?");
      const result = gateway.select(q < 0 ? "" : url.slice(q + 1));
      if (!result.ok) return { active: [], unknown: [] };
      return { active: result.selection.active, unknown: result.selection.unknown };
    },
    close: async () => {
      await handler.close();
      await gateway.close();
      await closeAgent();
    },
  };
}
