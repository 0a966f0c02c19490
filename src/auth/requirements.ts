/** @module Toolsets by identity: which `requires:` a principal meets, and a key of exactly those grants. Pure. */
import { createHash } from "node:crypto";
import { claimValues } from "./claims.js";
import type { Principal, Requires } from "./types.js";

const isEmpty = (r: Requires | undefined) =>
  !r || ((r.scopes === undefined || r.scopes.length === 0) && Object.keys(r.claims ?? {}).length === 0);

/**
 * True when the principal meets every key of `requires` (all-of across keys; `scopes` is one key,
 * each claim is one key), each key by any one of its listed values. No requirement: always met.
 * No principal (no `auth:`): only toolsets without a requirement. A bare static token has every
 * scope and no claims.
 */
export function meetsRequirement(principal: Principal | undefined, requires: Requires | undefined): boolean {
  if (isEmpty(requires)) return true;
  if (!principal) return false;
  const { scopes, claims } = requires!;
  if (scopes && scopes.length > 0) {
    const held = principal.scopes;
    if (held !== "all" && !scopes.some((s) => held.has(s))) return false;
  }
  for (const [name, wanted] of Object.entries(claims ?? {})) {
    if (!Object.hasOwn(principal.claims, name)) return false;
    const have = new Set(claimValues(name, principal.claims[name]));
    if (!wanted.some((w) => have.has(w))) return false;
  }
  return true;
}

/** Toolset name → its requirement, in catalog order (toolsets without `requires:` may be left out). */
export type CatalogRequirements =
  | ReadonlyMap<string, Requires | undefined>
  | Readonly<Record<string, Requires | undefined>>;

function entries(reqs: CatalogRequirements): [string, Requires | undefined][] {
  return reqs instanceof Map ? [...reqs.entries()] : Object.entries(reqs);
}

/** The names of the toolsets with a requirement that the principal meets, sorted. */
export function grants(principal: Principal | undefined, reqs: CatalogRequirements): string[] {
  return entries(reqs)
    .filter(([, r]) => !isEmpty(r) && meetsRequirement(principal, r))
    .map(([name]) => name)
    .sort();
}

/**
 * A stable digest of exactly the grants that matter: which gated toolsets the principal may use.
 * Two principals that unlock the same toolsets share a key, whoever they are; so a resolution is
 * keyed by selection + grant key and never by principal. `""` when the catalog gates nothing.
 */
export function grantKey(principal: Principal | undefined, reqs: CatalogRequirements): string {
  const gated = entries(reqs).filter(([, r]) => !isEmpty(r));
  if (gated.length === 0) return "";
  const met = grants(principal, reqs);
  return `g${createHash("sha256").update(JSON.stringify(met)).digest("base64url").slice(0, 16)}`;
}

/**
 * Who a principal is, for binding (a session, a per-user upstream grant): its subject within the namespace
 * that issued it. A static token's configured `subject: alice` and an issuer's user `sub: alice` are two
 * identities; tokens of one issuer (JWT or introspection) are one namespace.
 */
export function identityKey(principal: Principal): string {
  return `${principal.via === "token" ? "static" : "oauth"}:${principal.subject}`;
}

/**
 * The scopes to challenge with, for requirements the principal does not meet by scope: every scope
 * a step-up must bring. For each requirement, a scope the token already holds from its list is kept
 * (an SDK v1 client requests exactly the challenged set), otherwise the list's first scope is named.
 * A requirement whose claims the principal does not meet is skipped: a new token would not meet it
 * either. Empty when scopes would not help.
 */
export function scopesToChallenge(
  principal: Principal | undefined,
  needed: readonly (Requires | undefined)[],
): string[] {
  const out = new Set<string>();
  let missing = false;
  for (const r of needed) {
    if (!r?.scopes || r.scopes.length === 0) continue;
    if (r.claims && !meetsRequirement(principal, { claims: r.claims })) continue;
    const held = principal?.scopes;
    const have = held === "all" ? r.scopes[0] : r.scopes.find((s) => held?.has(s));
    if (have !== undefined) out.add(have);
    else {
      missing = true;
      out.add(r.scopes[0]!);
    }
  }
  return missing ? [...out] : [];
}

/**
 * A principal from the JSON of a token's claims, for `toolpacks toolsets --as '{"scope":"a b","groups":["x"]}'`:
 * scopes from `scope` (or `scp`), claims as given, subject `sub` or "cli". Throws a plain message on bad input.
 */
export function parsePrincipalJson(json: string): Principal {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new Error(
      '--as must be a JSON object of claims, such as \'{"scope":"notes:read","groups":["eng"]}\'',
    );
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new Error(
      `--as must be a JSON object of claims, not ${Array.isArray(value) ? "an array" : typeof value}`,
    );
  }
  const claims = value as Record<string, unknown>;
  const scopes =
    claims.scope !== undefined ? claimValues("scope", claims.scope) : claimValues("scp", claims.scp);
  return Object.freeze({
    subject: typeof claims.sub === "string" && claims.sub ? claims.sub : "cli",
    scopes: new Set(scopes),
    claims: Object.freeze({ ...claims }),
    via: "jwt",
  });
}
