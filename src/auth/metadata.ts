/** @module OAuth 2.0 Protected Resource Metadata (RFC 9728): the document and where it is served. */
import type { OAuthConfig } from "./types.js";

export interface ProtectedResourceMetadata {
  readonly resource: string;
  readonly authorization_servers: readonly string[];
  readonly scopes_supported?: readonly string[];
  readonly bearer_methods_supported: readonly ["header"];
  readonly resource_name?: string;
}

/**
 * The document for `/.well-known/oauth-protected-resource` and its path form. `resource` is the
 * configured audience: a client asks its authorization server for a token with this exact value
 * (RFC 8707 `resource`), and the token's `aud` is then checked against the same string.
 */
export function protectedResourceMetadata(
  oauth: OAuthConfig,
  resource: string = oauth.audience,
  name?: string,
): ProtectedResourceMetadata {
  return Object.freeze({
    resource,
    authorization_servers: Object.freeze([oauth.issuer]),
    ...(oauth.scopes_supported && oauth.scopes_supported.length > 0
      ? { scopes_supported: Object.freeze([...oauth.scopes_supported]) }
      : {}),
    bearer_methods_supported: Object.freeze(["header"] as const),
    ...(name ? { resource_name: name } : {}),
  });
}

/**
 * The request paths that serve the document for this audience: the path form
 * (`/.well-known/oauth-protected-resource/mcp`) and the root form. MCP clients try the path form
 * first; SDK v1 keeps the MCP URL's query string on it (`…/mcp?only=docs`), so match the path only.
 */
export function metadataPaths(audience: string): string[] {
  const u = new URL(audience);
  const path = u.pathname === "/" ? "" : u.pathname.replace(/\/$/, "");
  const root = "/.well-known/oauth-protected-resource";
  return path ? [`${root}${path}`, root] : [root];
}
