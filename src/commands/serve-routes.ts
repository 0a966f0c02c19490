/** @module The routes `serve` answers, for its 404 page: read from the options its HTTP handler is given. */
import { metadataPaths } from "../auth/metadata.js";
import type { Catalog } from "../catalog/types.js";
import { defaultHandlerOptions, type HandlerOptions } from "../http/handler.js";

type RouteOptions = Partial<
  Pick<HandlerOptions, "path" | "healthz" | "toolsetsRoute" | "metrics" | "oauthPages" | "console">
>;

/** What the handler built with `given` serves for this catalog: MCP, then the GET routes it has not turned off. */
export function servedRoutes(given: RouteOptions, catalog: Catalog): string[] {
  const o = { ...defaultHandlerOptions, ...given };
  const audience = catalog.auth?.oauth?.audience;
  const metadata = audience
    ? [...new Set([`/.well-known/oauth-protected-resource${o.path}`, ...metadataPaths(audience)])]
    : [];
  return [
    o.path,
    ...(o.toolsetsRoute ? ["/toolsets"] : []),
    ...(o.healthz ? ["/healthz", "/readyz"] : []),
    ...(o.metrics ? ["/metrics"] : []),
    ...metadata,
    ...(o.oauthPages ? ["/oauth/"] : []),
    ...(o.console ? [`${o.console.path}/`] : []),
  ];
}
