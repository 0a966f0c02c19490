/** @module Bearer challenges (RFC 6750 §3, RFC 9728 §5.1) worded the way MCP SDK clients parse them. */

/**
 * Both SDK generations read a challenge with `header.split(" ")` (first word must be `Bearer`, and
 * something must follow it) and one regex per parameter, `name=("[^"]+"|[^\s,]+)`, first match
 * wins. So: `Bearer ` and a parameter always, every value quoted and non-empty, and
 * `error_description` last, so that its text can never be read as another parameter.
 */

/** The RFC 9728 well-known URL for a resource: `https://h/mcp` → `https://h/.well-known/oauth-protected-resource/mcp`. */
export function resourceMetadataUrlFor(resource: string): string {
  const u = new URL(resource);
  const path = u.pathname === "/" ? "" : u.pathname.replace(/\/$/, "");
  return `${u.origin}/.well-known/oauth-protected-resource${path}`;
}

/** RFC 6750 allows %x20-21 / %x23-5B / %x5D-7E inside these quoted values: no `"`, no `\`, no control. */
function quoted(value: string): string {
  return `"${value.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, "")}"`;
}

function header(params: readonly (readonly [string, string | undefined])[]): string {
  const parts = params.filter(([, v]) => v !== undefined && v !== "").map(([k, v]) => `${k}=${quoted(v!)}`);
  return `Bearer ${parts.join(", ")}`;
}

/** Scopes as one `scope` value: in order given, without duplicates, space-separated. */
function scopeValue(scopes: Iterable<string>): string {
  return [...new Set(scopes)].join(" ");
}

export interface UnauthorizedOptions {
  /** Set when a token was given and refused: `invalid_token` (or `invalid_request` for a malformed header). */
  readonly error?: "invalid_token" | "invalid_request";
  readonly description?: string;
  /** The scopes to ask for (MCP "scope selection strategy"): a client requests exactly these. */
  readonly scopes?: readonly string[];
}

/** The 401 challenge: `Bearer resource_metadata="…"` (+ `scope`, `error`, `error_description`). */
export function challengeUnauthorized(
  resourceMetadataUrl: string,
  options: UnauthorizedOptions = {},
): string {
  return header([
    ["resource_metadata", resourceMetadataUrl],
    ["scope", options.scopes && options.scopes.length > 0 ? scopeValue(options.scopes) : undefined],
    ["error", options.error],
    ["error_description", options.error ? options.description : undefined],
  ]);
}

/**
 * The 403 step-up challenge for a token that lacks scopes: `error="insufficient_scope"`,
 * `scope="<scopes>"`, `resource_metadata`. Give every scope the operation needs, the ones the
 * token already has included: an SDK v1 client re-authorizes with exactly the challenged scopes
 * (it replaces, the v2 client unions), and gives up when the same header comes back twice.
 */
export function challengeInsufficientScope(
  scopes: readonly string[],
  resourceMetadataUrl: string,
  description = "the token lacks a scope this request needs",
): string {
  return header([
    ["error", "insufficient_scope"],
    ["scope", scopeValue(scopes)],
    ["resource_metadata", resourceMetadataUrl],
    ["error_description", description],
  ]);
}

/** The 401 challenge for static tokens only (no authorization server to point at). */
export function challengeStaticOnly(error?: "invalid_token", description?: string): string {
  return header([
    ["realm", "toolpacks"],
    ["error", error],
    ["error_description", error ? description : undefined],
  ]);
}
