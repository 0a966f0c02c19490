/**
 * @module Which toolsets a client's profile defers: none while the list fits its caps; over them, whole
 * toolsets, the last declared first, never an `always` one, and the ones the URL names only when nothing else
 * is enough; then any of them that would fit back in is listed again. Pure.
 */
import type { Catalog, ClientProfile } from "../catalog/types.js";
import type { Resolution } from "../resolve.js";
import { deferredToolDefs } from "../search/tools.js";
import type { Selection } from "../selection.js";

/** A tool as the plan weighs it: the toolsets that expose it and the bytes of the definition it would list. */
export interface Sized {
  readonly toolsets: readonly string[];
  readonly bytes: number;
}

export interface Plan {
  /** Toolsets the profile defers, catalog order. */
  readonly deferred: readonly string[];
  /** Why, when it defers any: the cap and what the list would have been. */
  readonly reason?: string;
}

export interface Listing {
  readonly tools: number;
  readonly bytes: number;
}

const SEARCH_BYTES = deferredToolDefs.reduce((n, d) => n + Buffer.byteLength(JSON.stringify(d)), 0);

/**
 * The size of `{"tools":[…]}` with `deferred` deferred: the listed tools, find_tools and call_tool when anything
 * is searched, and the server's own tools (`extra`: their count and bytes).
 */
export function listing(
  tools: readonly Sized[],
  deferred: ReadonlySet<string>,
  extra: Listing,
  searched: boolean,
): Listing {
  let n = 0;
  let bytes = 0;
  for (const t of tools) {
    if (deferred.size > 0 && t.toolsets.every((s) => deferred.has(s))) continue;
    n++;
    bytes += t.bytes;
  }
  if (searched || deferred.size > 0) {
    n += deferredToolDefs.length;
    bytes += SEARCH_BYTES;
  }
  n += extra.tools;
  bytes += extra.bytes;
  // `{"tools":[` and `]}`, and a comma between two definitions.
  return { tools: n, bytes: 12 + bytes + Math.max(0, n - 1) };
}

/** The caps a listing is over, as reasons ("max_tools 40: 57 tools would be listed"); empty when within. */
export function overCaps(profile: ClientProfile, l: Listing, verb = "would be"): string[] {
  const over: string[] = [];
  if (profile.maxTools !== undefined && l.tools > profile.maxTools)
    over.push(`max_tools ${profile.maxTools}: ${l.tools} tools ${verb} listed`);
  if (profile.maxListBytes !== undefined && l.bytes > profile.maxListBytes)
    over.push(`max_list_bytes ${profile.maxListBytes}: ${l.bytes} bytes ${verb} listed`);
  return over;
}

/**
 * The profile's deferral for a resolution whose tools list `tools` (its routes, with the bytes each would list),
 * beside what the selection itself defers. `searched`: find_tools is listed anyway (descriptions were cut).
 */
export function planDeferral(
  catalog: Catalog,
  resolution: Resolution,
  selection: Selection,
  profile: ClientProfile,
  tools: readonly Sized[],
  extra: Listing,
  searched: boolean,
): Plan {
  const base = new Set(resolution.deferred.map((d) => d.name));
  const explicit = new Set(selection.explicit ?? []);
  // Candidates, in the order they are deferred: the last declared first, those the URL names after all others.
  const open = resolution.active.filter((n) => !base.has(n) && !catalog.toolset.get(n)?.always).reverse();
  const order = [...open.filter((n) => !explicit.has(n)), ...open.filter((n) => explicit.has(n))];
  const withDeferred = (d: Iterable<string>) => new Set([...base, ...d]);
  const size = (d: Iterable<string>) => listing(tools, withDeferred(d), extra, searched);
  const catalogOrder = (d: ReadonlySet<string>) => resolution.active.filter((n) => d.has(n));
  if (profile.defer === "none" || !order.length) return { deferred: [] };
  if (profile.defer === "all") return { deferred: catalogOrder(new Set(order)), reason: "defer: all" };
  const over = overCaps(profile, size([]));
  if (!over.length) return { deferred: [] };
  const chosen = new Set<string>();
  for (const n of order) {
    chosen.add(n);
    if (!overCaps(profile, size(chosen)).length) break;
  }
  // List again what fits back in: the URL's own toolsets first, then in declared order.
  if (!overCaps(profile, size(chosen)).length) {
    const back = [...order].reverse();
    for (const n of [...back.filter((x) => explicit.has(x)), ...back.filter((x) => !explicit.has(x))]) {
      if (!chosen.has(n)) continue;
      chosen.delete(n);
      if (overCaps(profile, size(chosen)).length) chosen.add(n);
    }
  }
  return { deferred: catalogOrder(chosen), reason: over.join("; ") };
}
