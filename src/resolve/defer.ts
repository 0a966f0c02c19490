/** @module Which active toolsets a resolution defers behind find_tools: by config, by the URL, or automatically by size. */
import type { Catalog } from "../catalog/types.js";
import type { Selection } from "../selection.js";
import type { DeferredToolset, Route } from "./types.js";

/**
 * The deferred toolsets among `active`, in catalog order: those the selection defers (config `deferred: true`,
 * URL `defer=`), and, when the catalog sets `search.auto_over_tokens` and the active tools' definitions
 * would cost more ≈tokens (bytes / 4, rounded up) than that, every other active toolset but `always` ones.
 */
export function deferralOf(
  catalog: Catalog,
  selection: Selection,
  active: readonly string[],
  tools: readonly Route[],
): DeferredToolset[] {
  const chosen = new Set(selection.deferred);
  const limit = catalog.autoDeferOverTokens;
  const auto = limit !== undefined && Math.ceil(definitionBytes(tools) / 4) > limit;
  const out: DeferredToolset[] = [];
  for (const name of active) {
    const t = catalog.toolset.get(name);
    if (!t) continue;
    const by = chosen.has(name) ? (t.deferred ? "config" : "url") : auto && !t.always ? "auto" : undefined;
    if (by) out.push({ name, title: t.title, description: t.description, by });
  }
  return out;
}

/** UTF-8 bytes of `{"tools":[…definitions]}`, as tools/list would carry them. */
function definitionBytes(tools: readonly Route[]): number {
  return Buffer.byteLength(JSON.stringify({ tools: tools.map((r) => r.definition) }));
}

/** A tool is deferred when every active toolset that exposes it is deferred (one listed toolset lists it). */
export function isDeferred(deferred: ReadonlySet<string>, route: Route): boolean {
  return deferred.size > 0 && route.toolsets.every((t) => deferred.has(t));
}
