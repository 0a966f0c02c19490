/** @module Authorization server metadata discovery (RFC 8414, then OpenID Connect Discovery), the MCP order. */
import { AuthServerError, displayUrl, fetchJson } from "./fetch-json.js";

/**
 * The URLs to try, in the order the MCP authorization spec gives: for `https://a/t1`,
 * `/.well-known/oauth-authorization-server/t1`, `/.well-known/openid-configuration/t1`,
 * `/t1/.well-known/openid-configuration`; for `https://a`, the first two at the root.
 */
export function discoveryUrls(issuer: string): string[] {
  const u = new URL(issuer);
  const path = u.pathname === "/" ? "" : u.pathname.replace(/\/$/, "");
  if (!path) {
    return [
      `${u.origin}/.well-known/oauth-authorization-server`,
      `${u.origin}/.well-known/openid-configuration`,
    ];
  }
  return [
    `${u.origin}/.well-known/oauth-authorization-server${path}`,
    `${u.origin}/.well-known/openid-configuration${path}`,
    `${u.origin}${path}/.well-known/openid-configuration`,
  ];
}

/** http is accepted only for loopback hosts (development and tests); everything else must be https. */
export function isAcceptableUrl(value: string): boolean {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return false;
  }
  if (u.hash || u.username || u.password) return false;
  if (u.protocol === "https:") return true;
  return u.protocol === "http:" && ["127.0.0.1", "localhost", "[::1]"].includes(u.hostname);
}

export interface AuthServerMetadata {
  readonly issuer: string;
  readonly jwks_uri?: string;
  readonly introspection_endpoint?: string;
}

/**
 * The first metadata document found. A document whose `issuer` is not exactly the configured
 * issuer is refused (RFC 8414 §3.3): a mix-up must not hand us another server's keys.
 */
export async function discover(
  issuer: string,
  fetchFn: typeof fetch,
  closing: AbortSignal,
): Promise<AuthServerMetadata> {
  let last: AuthServerError | undefined;
  for (const url of discoveryUrls(issuer)) {
    let doc: Record<string, unknown>;
    try {
      doc = await fetchJson(fetchFn, url, { headers: { accept: "application/json" } }, closing);
    } catch (e) {
      if (e instanceof AuthServerError && e.notFound) {
        last = e;
        continue;
      }
      throw e;
    }
    if (doc.issuer !== issuer) {
      throw new AuthServerError(`${displayUrl(url)} names another issuer than ${issuer}`);
    }
    const jwks = doc.jwks_uri;
    if (jwks !== undefined && (typeof jwks !== "string" || !isAcceptableUrl(jwks))) {
      throw new AuthServerError(`${displayUrl(url)} has an unusable jwks_uri`);
    }
    const introspection = doc.introspection_endpoint;
    return {
      issuer,
      ...(typeof jwks === "string" ? { jwks_uri: jwks } : {}),
      ...(typeof introspection === "string" ? { introspection_endpoint: introspection } : {}),
    };
  }
  throw new AuthServerError(
    `no authorization server metadata for ${issuer} (${last?.message ?? "not found"})`,
  );
}
