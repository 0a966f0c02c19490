/** @module Pure: which scopes to ask for (MCP 2026-07-28 "Scope Selection Strategy" and step-up). */
import type { Discovery, OAuthUpstreamConfig } from "./types.js";

export interface ScopeInputs {
  /** `scope` of the upstream's current challenge (authoritative for this operation). */
  readonly challenged?: readonly string[];
  /** `scopes_supported` of the protected resource metadata. */
  readonly resourceScopes?: readonly string[];
  /** `oauth.scopes` from the config. */
  readonly configured?: readonly string[];
  /** Scopes requested for the grant being replaced: kept, so a step-up loses nothing. */
  readonly previous?: readonly string[];
  /** `scopes_supported` of the AS: `offline_access` is added when listed, for a refresh token. */
  readonly authServerScopes?: readonly string[];
  readonly wantsRefresh: boolean;
}

/** The scope list to request; empty means "omit the scope parameter". */
export function selectScopes(i: ScopeInputs): string[] {
  const base = i.challenged?.length
    ? i.challenged
    : i.resourceScopes !== undefined
      ? i.resourceScopes
      : (i.configured ?? []);
  const out = new Set([...(i.previous ?? []), ...base]);
  if (out.size && i.wantsRefresh && i.authServerScopes?.includes("offline_access")) out.add("offline_access");
  if (!i.wantsRefresh) out.delete("offline_access");
  return [...out];
}

/** A stable name for a scope set (order-free), for counting repeated step-ups. */
export function scopeKey(scopes: readonly string[]): string {
  return [...new Set(scopes)].sort().join(" ");
}

/** True when every scope of `wanted` is already in `have`. */
export function covers(have: readonly string[], wanted: readonly string[]): boolean {
  return wanted.every((s) => have.includes(s));
}

/** selectScopes fed from a discovery and an upstream's config. */
export function scopesFor(
  oauth: OAuthUpstreamConfig,
  d: Discovery,
  from: { readonly challenged?: readonly string[]; readonly previous?: readonly string[] } = {},
): string[] {
  return selectScopes({
    ...(from.challenged ? { challenged: from.challenged } : {}),
    ...(d.resourceMetadata.scopes_supported ? { resourceScopes: d.resourceMetadata.scopes_supported } : {}),
    ...(oauth.scopes ? { configured: oauth.scopes } : {}),
    ...(from.previous ? { previous: from.previous } : {}),
    ...(d.as.scopes_supported ? { authServerScopes: d.as.scopes_supported } : {}),
    wantsRefresh: oauth.grant !== "client_credentials",
  });
}
