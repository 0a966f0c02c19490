/**
 * @module The OAuth endpoints as pure handlers the HTTP layer mounts: `GET|POST /oauth/UPSTREAM/start`,
 * `GET /oauth/callback` and `GET /oauth/client-metadata.json`. A request in, a response out; no sockets here.
 */
import type { OAuthClient } from "./client.js";
import { OAuthFlowError } from "./errors.js";
import { donePage, failedPage, PAGE_HEADERS } from "./page.js";
import { clientMetadataDocument, defaultClientMetadataUrl, matchOAuthPath, OAUTH_PATHS } from "./paths.js";
import { bindingCookie, cookieValue, startPage } from "./start.js";
import type { FlowRequest, FlowResponse } from "./types.js";

export type { FlowRequest, FlowResponse } from "./types.js";

export interface OAuthRoutesOptions {
  /** The public base URL the HTTP layer is reached at (https in production). */
  readonly publicUrl: string;
  /** The CIMD URL to serve a document for (default: PUBLIC/oauth/client-metadata.json when https). */
  readonly clientMetadataUrl?: string;
  readonly clientName?: string;
}

const STATUS: Partial<Record<OAuthFlowError["code"], number>> = {
  "unknown-upstream": 404,
  principal: 401,
  forbidden: 403,
  busy: 503,
};

const html = (status: number, body: string, extra: Record<string, string | string[]> = {}): FlowResponse => ({
  status,
  headers: { ...PAGE_HEADERS, ...extra },
  body,
});

function failure(err: unknown): FlowResponse {
  if (err instanceof OAuthFlowError) {
    const status = STATUS[err.code] ?? 400;
    return html(status, failedPage(err.message), status === 503 ? { "retry-after": "60" } : {});
  }
  return html(500, failedPage("toolpacks could not complete this authorization; see its log."));
}

/** The handler: a response for an OAuth path, undefined for any other path. */
export function oauthRoutes(
  client: OAuthClient,
  options: OAuthRoutesOptions,
): (req: FlowRequest) => Promise<FlowResponse | undefined> {
  const secure = options.publicUrl.startsWith("https://") ? "; Secure" : "";
  const metadataUrl = options.clientMetadataUrl ?? defaultClientMetadataUrl(options.publicUrl);
  return async (req) => {
    const url = new URL(req.url, "http://x");
    const route = matchOAuthPath(url.pathname);
    if (!route) return undefined;
    const methods = route.route === "start" ? ["GET", "HEAD", "POST"] : ["GET", "HEAD"];
    if (!methods.includes(req.method))
      return { status: 405, headers: { allow: methods.join(", "), "cache-control": "no-store" }, body: "" };
    switch (route.route) {
      case "client-metadata":
        if (!metadataUrl) return html(404, failedPage("no client metadata document is served here"));
        return {
          status: 200,
          headers: { "content-type": "application/json", "cache-control": "public, max-age=3600" },
          body: JSON.stringify(
            clientMetadataDocument({
              clientId: metadataUrl,
              publicUrl: options.publicUrl,
              ...(options.clientName ? { clientName: options.clientName } : {}),
            }),
          ),
        };
      case "start":
        try {
          return await startPage(client, route.upstream, url, req, { secure });
        } catch (err) {
          return failure(err);
        }
      case "callback": {
        const state = url.searchParams.get("state");
        const name = state ? bindingCookie(state) : undefined;
        const clear: Record<string, string> = name
          ? { "set-cookie": `${name}=; Path=${OAUTH_PATHS.callback}; Max-Age=0; HttpOnly${secure}` }
          : {};
        try {
          const binding = name ? cookieValue(req.cookie, name) : undefined;
          const done = await client.complete(url.searchParams, binding);
          return html(200, donePage(done.upstream), clear);
        } catch (err) {
          const r = failure(err);
          return { ...r, headers: { ...r.headers, ...clear } };
        }
      }
    }
  };
}
