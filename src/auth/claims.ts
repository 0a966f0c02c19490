/** @module From a token's claims (JWT payload or introspection answer) to a principal. */
import type { Principal } from "./types.js";

/** Claims whose string value is a space-separated list (RFC 8693 `scope`; `scp` as some issuers write it). */
const SPACE_SEPARATED_CLAIMS: ReadonlySet<string> = new Set(["scope", "scp"]);

/** The strings a claim value stands for: a list's string members, a space-separated claim split, a scalar as text. */
export function claimValues(name: string, value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === "string");
  if (typeof value === "string") {
    return SPACE_SEPARATED_CLAIMS.has(name) ? value.split(/\s+/).filter(Boolean) : [value];
  }
  if (typeof value === "number" || typeof value === "boolean") return [String(value)];
  return [];
}

/** The token's scopes: `scope`, else `scp`; none when neither is there. */
function scopesOf(claims: Readonly<Record<string, unknown>>): ReadonlySet<string> {
  if (claims.scope !== undefined) return new Set(claimValues("scope", claims.scope));
  return new Set(claimValues("scp", claims.scp));
}

/**
 * The principal of verified claims, or undefined when nothing names a subject. The subject is
 * `sub`; a token with only `client_id` (some client-credentials tokens) is `client:<id>`.
 */
export function principalFromClaims(
  claims: Readonly<Record<string, unknown>>,
  via: Principal["via"],
): Principal | undefined {
  const subject =
    typeof claims.sub === "string" && claims.sub
      ? claims.sub
      : typeof claims.client_id === "string" && claims.client_id
        ? `client:${claims.client_id}`
        : undefined;
  if (subject === undefined) return undefined;
  return Object.freeze({ subject, scopes: scopesOf(claims), claims: Object.freeze({ ...claims }), via });
}
