/**
 * @module A URL's selection for a client with a profile: the profile's `selection:` is what a URL naming
 * nothing gets, and the profile rides on the selection into the resolver, as a principal's grants do.
 */
import type { Catalog, ClientProfile } from "../catalog/types.js";
import { type Selection, type SelectionOptions, type SelectResult, select } from "../selection.js";

/** `select`, for a client with this profile (or none: then exactly `select`). */
export function selectFor(
  catalog: Catalog,
  query: string,
  options: SelectionOptions = {},
  profile?: ClientProfile,
): SelectResult {
  if (!profile) return select(catalog, query, options);
  const r = select(
    catalog,
    query,
    profile.selection !== undefined ? { ...options, defaultSelection: profile.selection } : options,
  );
  return r.ok ? { ok: true, selection: withProfile(r.selection, profile) } : r;
}

function withProfile(selection: Selection, profile: ClientProfile): Selection {
  return Object.freeze({ ...selection, profile });
}

/**
 * What the fitted resolution of a selection depends on beyond the selection itself: the profile's caps, never
 * the client's name. Sessions or contexts that share a resolution must agree on it ("" without a profile).
 */
export function profileKey(selection: Selection): string {
  const p = selection.profile;
  if (!p) return "";
  return `tools=${p.maxTools ?? ""};bytes=${p.maxListBytes ?? ""};defer=${p.defer};cut=${p.maxDescriptionBytes ?? ""};explicit=${(selection.explicit ?? []).join(",")}`;
}
