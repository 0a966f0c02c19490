/**
 * @module The OAuth endpoints as pure handlers the HTTP layer mounts: `GET /oauth/UPSTREAM/start`,
 * `GET /oauth/callback` and `GET /oauth/client-metadata.json`. A request in, a response out; no sockets here.
 */
import { randomBytes } from "node:crypto";
import { sha256Hex } from "./authorize.js";
import type { OAuthClient } from "./client.js";
import { OAuthFlowError } from "./errors.js";
import { donePage, failedPage, PAGE_HEADERS } from "./page.js";
import { clientMetadataDocument, defaultClientMetadataUrl, matchOAuthPath, OAUTH_PATHS } from "./paths.js";
import { ticketPrincipal } from "./ticket.js";

export interface FlowRequest {
  readonly method: string;
  /** The request target: a path with its query (`/oauth/callback?code=…`). */
  readonly url: string;
  /** The request's Cookie header. */
  readonly cookie?: string;
  /**
   * The principal the HTTP layer authenticated, if any. Without one, a start URL must carry a ticket toolpacks
   * handed out (a browser has no bearer token), unless `openSharedStart` lets anyone start a shared upstream.
   */
  readonly principal?: string;
}

export interface FlowResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | readonly string[]>>;
  readonly body: string;
}

export interface OAuthRoutesOptions {
  /** The public base URL the HTTP layer is reached at (https in production). */
  readonly publicUrl: string;
  /** The CIMD URL to serve a document for (default: PUBLIC/oauth/client-metadata.json when https). */
  readonly clientMetadataUrl?: string;
  readonly clientName?: string;
  /** Anyone may start a shared upstream's authorization (a deployment without `auth:`): default false. */
  readonly openSharedStart?: boolean;
}

/** The cookie that ties a callback to the browser that started the flow (nobody else's browser can finish it). */
const bindingCookie = (state: string) => `toolpacks_oauth_${sha256Hex(state).slice(0, 16)}`;

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of header?.split(";") ?? []) {
    const i = part.indexOf("=");
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

const html = (status: number, body: string, extra: Record<string, string | string[]> = {}): FlowResponse => ({
  status,
  headers: { ...PAGE_HEADERS, ...extra },
  body,
});

function failure(err: unknown): FlowResponse {
  if (err instanceof OAuthFlowError) {
    const status = err.code === "unknown-upstream" ? 404 : err.code === "principal" ? 401 : 400;
    return html(status, failedPage(err.message));
  }
  return html(500, failedPage("toolpacks could not complete this authorization; see its log."));
}

/** Who a start request authorizes for: the signed-in principal, else the one its ticket names. */
async function startPrincipal(
  client: OAuthClient,
  upstream: string,
  url: URL,
  req: FlowRequest,
  openShared: boolean,
): Promise<string | undefined> {
  if (req.principal !== undefined) return req.principal;
  const ticket = url.searchParams.get("ticket");
  if (ticket) return ticketPrincipal(client.tickets, client.records, upstream, ticket);
  const up = client.upstream(upstream);
  if (up.oauth.mode === "shared" && (openShared || !client.tickets)) return undefined;
  throw new OAuthFlowError(
    "principal",
    up.oauth.mode === "per-user"
      ? `upstream ${upstream} is per-user: sign in to toolpacks first, or open the link toolpacks gave you`
      : `open the link toolpacks gave you, or authorize ${upstream} with toolpacks login`,
  );
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
    if (req.method !== "GET" && req.method !== "HEAD")
      return { status: 405, headers: { allow: "GET, HEAD", "cache-control": "no-store" }, body: "" };
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
          const nonce = randomBytes(24).toString("base64url");
          const scope = url.searchParams.get("scope")?.split(/\s+/).filter(Boolean);
          const who = await startPrincipal(
            client,
            route.upstream,
            url,
            req,
            options.openSharedStart === true,
          );
          const location = await client.begin(route.upstream, who, {
            binding: nonce,
            ...(scope?.length ? { scopes: scope } : {}),
          });
          const state = new URL(location).searchParams.get("state")!;
          const cookie = `${bindingCookie(state)}=${nonce}; Path=${OAUTH_PATHS.callback}; Max-Age=600; HttpOnly; SameSite=Lax${secure}`;
          return {
            status: 302,
            headers: { location, "set-cookie": cookie, "cache-control": "no-store" },
            body: "",
          };
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
