/** @module Discovery from an upstream's 401: protected resource metadata (RFC 9728), then the AS (RFC 8414 / OIDC). */
import type { BearerChallenge } from "./challenge.js";
import { OAuthFlowError, remoteText } from "./errors.js";
import { assertReachable, assertSecureUrl, type Fetch, getJson } from "./http.js";
import type { AuthServerMetadata, Discovery, ResourceMetadata } from "./types.js";

/** The resource identifier of a URL (RFC 8707 §2): no fragment, no query, no trailing slash on a bare origin. */
export function canonicalResource(url: string): string {
  const u = new URL(url);
  const path = u.pathname === "/" ? "" : u.pathname;
  return `${u.protocol}//${u.host}${path}`;
}

/** RFC 9728 §3.1 well-known locations for an upstream URL: path form first, then the root. */
export function resourceMetadataUrls(upstreamUrl: string): string[] {
  const u = new URL(upstreamUrl);
  const root = `${u.protocol}//${u.host}/.well-known/oauth-protected-resource`;
  const path = u.pathname.replace(/\/$/, "");
  return path ? [`${root}${path}`, root] : [root];
}

/** RFC 8414 §3.1 and OIDC Discovery locations, in the order the MCP spec (2026-07-28) gives. */
export function authServerMetadataUrls(issuer: string): string[] {
  const u = new URL(issuer);
  const origin = `${u.protocol}//${u.host}`;
  const path = u.pathname.replace(/\/$/, "");
  if (!path)
    return [`${origin}/.well-known/oauth-authorization-server`, `${origin}/.well-known/openid-configuration`];
  return [
    `${origin}/.well-known/oauth-authorization-server${path}`,
    `${origin}/.well-known/openid-configuration${path}`,
    `${origin}${path}/.well-known/openid-configuration`,
  ];
}

/** A URL as an error may quote it: origin and path (no credentials, query or fragment). */
function shown(url: string): string {
  try {
    const u = new URL(url);
    return remoteText(`${u.origin}${u.pathname}`);
  } catch {
    return "(not a URL)";
  }
}

/** True when the metadata's `resource` names this upstream: same origin, and a path prefix of the upstream's path. */
export function resourceCovers(resource: string, upstreamUrl: string): boolean {
  let r: URL;
  let u: URL;
  try {
    r = new URL(resource);
    u = new URL(upstreamUrl);
  } catch {
    return false;
  }
  if (r.hash || r.origin !== u.origin) return false;
  const rp = r.pathname.replace(/\/$/, "");
  const up = u.pathname.replace(/\/$/, "");
  return rp === "" || up === rp || up.startsWith(`${rp}/`);
}

const strings = (v: unknown): string[] | undefined =>
  Array.isArray(v) && v.every((x) => typeof x === "string") ? (v as string[]) : undefined;

function asResourceMetadata(json: Record<string, unknown>): ResourceMetadata | string {
  const servers = strings(json.authorization_servers);
  if (!servers?.length) return "it names no authorization_servers";
  if (json.resource !== undefined && typeof json.resource !== "string") return "its resource is not a string";
  const scopes = strings(json.scopes_supported);
  return {
    authorization_servers: servers,
    ...(typeof json.resource === "string" ? { resource: json.resource } : {}),
    ...(scopes ? { scopes_supported: scopes } : {}),
  };
}

async function resourceMetadata(
  fetch: Fetch,
  name: string,
  upstreamUrl: string,
  challenge: BearerChallenge | undefined,
): Promise<ResourceMetadata> {
  const fromHeader = challenge?.resourceMetadata;
  if (fromHeader)
    assertReachable(fromHeader, upstreamUrl, `upstream ${name}'s resource_metadata URL`, "discovery");
  const tried: string[] = [];
  for (const url of new Set([...(fromHeader ? [fromHeader] : []), ...resourceMetadataUrls(upstreamUrl)])) {
    const r = await getJson(fetch, url, upstreamUrl);
    if (!r.ok) {
      tried.push(`${shown(url)}: ${r.reason}`);
      continue;
    }
    const prm = asResourceMetadata(r.json);
    if (typeof prm === "string") throw new OAuthFlowError("discovery", `${shown(url)}: ${prm}`);
    if (prm.resource !== undefined && !resourceCovers(prm.resource, upstreamUrl))
      throw new OAuthFlowError(
        "discovery",
        `upstream ${name}'s protected resource metadata (${shown(url)}) is for another resource than ${canonicalResource(upstreamUrl)}: refusing to authorize`,
      );
    return prm;
  }
  throw new OAuthFlowError(
    "discovery",
    `upstream ${name} asks for authorization but publishes no protected resource metadata (tried ${tried.join("; ")})`,
  );
}

function asAuthServerMetadata(json: Record<string, unknown>, issuer: string): AuthServerMetadata | string {
  if (json.issuer !== issuer) return `it is for another issuer than ${issuer}`;
  if (typeof json.token_endpoint !== "string") return "it has no token_endpoint";
  for (const k of ["token_endpoint", "authorization_endpoint", "registration_endpoint"] as const)
    if (json[k] !== undefined) {
      if (typeof json[k] !== "string") return `its ${k} is not a string`;
      assertReachable(json[k] as string, issuer, `${issuer}'s ${k}`);
    }
  return json as unknown as AuthServerMetadata;
}

/**
 * Authorization server metadata for an issuer; a document whose `issuer` differs is never used. `from`: who named
 * the issuer (the upstream's URL; the issuer itself when the config names it), for assertReachable.
 */
async function authServerMetadata(
  fetch: Fetch,
  issuer: string,
  from: string = issuer,
): Promise<AuthServerMetadata> {
  assertReachable(issuer, from, "the authorization server's issuer", "discovery");
  const tried: string[] = [];
  for (const url of authServerMetadataUrls(issuer)) {
    const r = await getJson(fetch, url, issuer);
    if (!r.ok) {
      tried.push(`${shown(url)}: ${r.reason}`);
      continue;
    }
    const as = asAuthServerMetadata(r.json, issuer);
    if (typeof as === "string") {
      tried.push(`${shown(url)}: ${as}`);
      continue;
    }
    return as;
  }
  throw new OAuthFlowError(
    "metadata",
    `no usable metadata for authorization server ${issuer} (${tried.join("; ")})`,
  );
}

/** From a challenge (or none) to the resource indicator and the AS metadata to use. */
export async function discover(
  fetch: Fetch,
  name: string,
  upstreamUrl: string,
  challenge: BearerChallenge | undefined,
  preferIssuer?: string,
): Promise<Discovery> {
  // A bearer token must not travel in the clear (OAuth 2.1 §1.5).
  assertSecureUrl(upstreamUrl, `upstream ${name}'s URL`, "config");
  const prm = await resourceMetadata(fetch, name, upstreamUrl, challenge);
  const issuer =
    preferIssuer && prm.authorization_servers.includes(preferIssuer)
      ? preferIssuer
      : prm.authorization_servers[0]!;
  // An issuer the config names is trusted as written; one only the upstream names is checked from the upstream.
  const as = await authServerMetadata(fetch, issuer, issuer === preferIssuer ? issuer : upstreamUrl);
  return { resource: prm.resource ?? canonicalResource(upstreamUrl), resourceMetadata: prm, as };
}
