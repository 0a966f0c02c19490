/** @module The URLs toolpacks serves for OAuth, and its Client ID Metadata Document. */

/** Paths the HTTP layer mounts (see routes.ts for the handlers). */
export const OAUTH_PATHS = {
  clientMetadata: "/oauth/client-metadata.json",
  callback: "/oauth/callback",
  start: (upstream: string) => `/oauth/${encodeURIComponent(upstream)}/start`,
} as const;

/** Which OAuth route a path is, if any. */
export function matchOAuthPath(
  pathname: string,
): { route: "client-metadata" } | { route: "callback" } | { route: "start"; upstream: string } | undefined {
  if (pathname === OAUTH_PATHS.clientMetadata) return { route: "client-metadata" };
  if (pathname === OAUTH_PATHS.callback) return { route: "callback" };
  const m = /^\/oauth\/([^/]+)\/start$/.exec(pathname);
  if (!m) return undefined;
  try {
    return { route: "start", upstream: decodeURIComponent(m[1]!) };
  } catch {
    return undefined;
  }
}

/** The loopback redirect of `toolpacks login` (any port: RFC 8252 §7.3 has the AS ignore it). */
const LOOPBACK_REDIRECT = "http://127.0.0.1/oauth/callback";

/** The CIMD URL toolpacks serves itself, when its public URL is https (the only kind an AS will fetch). */
export function defaultClientMetadataUrl(publicUrl: string | undefined): string | undefined {
  if (!publicUrl?.startsWith("https://")) return undefined;
  return `${publicUrl.replace(/\/$/, "")}${OAUTH_PATHS.clientMetadata}`;
}

/** A URL usable as a CIMD client_id: https with a path (draft-ietf-oauth-client-id-metadata-document §3). */
export function isClientMetadataUrl(url: string | undefined): url is string {
  if (!url) return false;
  try {
    const u = new URL(url);
    return u.protocol === "https:" && u.pathname !== "/" && !u.hash;
  } catch {
    return false;
  }
}

/** The document served at the CIMD URL: its `client_id` is the URL itself. */
export function clientMetadataDocument(input: {
  readonly clientId: string;
  readonly publicUrl?: string;
  readonly clientName?: string;
}): Record<string, unknown> {
  const base = input.publicUrl?.replace(/\/$/, "");
  return {
    client_id: input.clientId,
    client_name: input.clientName ?? "toolpacks",
    ...(base ? { client_uri: base } : {}),
    redirect_uris: [...(base ? [`${base}${OAUTH_PATHS.callback}`] : []), LOOPBACK_REDIRECT],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  };
}
