/**
 * @module Toolsets by identity, pure: what a principal may have of a selection, what a URL's named toolsets
 * need (for challenges), and how a requirement reads. Nothing here knows who the principal is beyond its
 * grants, so anything keyed by an access-narrowed selection is keyed by grants, never by principal.
 */
import { meetsRequirement } from "./auth/requirements.js";
import type { Principal, Requires } from "./auth/types.js";
import type { Catalog } from "./catalog/types.js";
import { type ParsedQuery, type Selection, selectionKey } from "./selection.js";

/** True when some toolset has a `requires:`. */
export function gates(catalog: Catalog): boolean {
  return catalog.toolsets.some((t) => t.requires);
}

/** The toolsets a principal does not meet, catalog order (none without `auth:`: nothing is gated then). */
export function deniedTo(catalog: Catalog, principal: Principal | undefined): string[] {
  return catalog.toolsets
    .filter((t) => t.requires && !meetsRequirement(principal, t.requires))
    .map((t) => t.name);
}

/**
 * The selection as this principal may have it: a requested toolset it does not meet leaves `active` for
 * `forbidden` (whatever made it requested: the URL, `default`, `always`), and `denied` lists every toolset
 * it does not meet. No principal (stdio, an anonymous `activeFor`) meets no requirement. Applying it again
 * (after a reload) starts from what was requested.
 */
export function withAccess(
  catalog: Catalog,
  selection: Selection,
  principal: Principal | undefined,
): Selection {
  const requested = new Set([...selection.active, ...(selection.forbidden ?? [])]);
  if (!gates(catalog)) {
    if (!selection.forbidden && !selection.denied) return selection;
    const active = catalog.toolsets.filter((t) => requested.has(t.name)).map((t) => t.name);
    const deferred = selection.deferred.filter((n) => active.includes(n));
    return Object.freeze({
      active,
      unknown: selection.unknown,
      deferred,
      key: selectionKey(active, deferred),
      ...carried(selection, active),
    });
  }
  const denied = new Set(deniedTo(catalog, principal));
  const order = catalog.toolsets.map((t) => t.name).filter((n) => requested.has(n));
  const active = Object.freeze(order.filter((n) => !denied.has(n)));
  const forbidden = Object.freeze(order.filter((n) => denied.has(n)));
  const deferred = Object.freeze(selection.deferred.filter((n) => active.includes(n)));
  return Object.freeze({
    active,
    unknown: selection.unknown,
    deferred,
    key: selectionKey(active, deferred),
    ...(forbidden.length ? { forbidden } : {}),
    ...(denied.size ? { denied: Object.freeze([...denied]) } : {}),
    gated: true,
    ...carried(selection, active),
  });
}

/** What a selection says besides its sets, kept when access narrows it: the URL's own names, the client's profile. */
function carried(selection: Selection, active: readonly string[]): Pick<Selection, "explicit" | "profile"> {
  const explicit = selection.explicit?.filter((n) => active.includes(n));
  return {
    ...(explicit?.length ? { explicit: Object.freeze(explicit) } : {}),
    ...(selection.profile ? { profile: selection.profile } : {}),
  };
}

/**
 * What a resolution of this selection depends on: its active set and which requested toolsets are
 * forbidden (their report). Principals with the same grants share it; no principal is in it.
 */
export function resolutionKey(selection: Selection): string {
  return selection.forbidden?.length
    ? `${selection.key}|forbidden:${selection.forbidden.join(",")}`
    : selection.key;
}

/** What a principal may see of a selection, its report included: a session whose access key a reload changes ends. */
export function accessKey(selection: Selection): string {
  return `${resolutionKey(selection)}|denied:${(selection.denied ?? []).join(",")}`;
}

/**
 * The requirements of the gated toolsets a URL names (a bare key, `toolsets=`, `only=`; never `without=`,
 * never a default the URL does not name): what a 401 asks scopes for, and what step-up checks.
 */
export function namedRequirements(
  catalog: Catalog,
  query: ParsedQuery,
): { name: string; requires: Requires }[] {
  const named = new Set(query.only ?? query.add);
  const out: { name: string; requires: Requires }[] = [];
  for (const t of catalog.toolsets)
    if (t.requires && named.has(t.name)) out.push({ name: t.name, requires: t.requires });
  return out;
}

/** "needs the scope admin or ops, and groups eng or sre": what a forbidden toolset's report says. */
export function requiresText(requires: Requires): string {
  const any = (xs: readonly string[]) => xs.join(" or ");
  const parts: string[] = [];
  if (requires.scopes?.length) parts.push(`the scope ${any(requires.scopes)}`);
  for (const [claim, values] of Object.entries(requires.claims ?? {})) parts.push(`${claim} ${any(values)}`);
  return `needs ${parts.join(", and ")}`;
}
