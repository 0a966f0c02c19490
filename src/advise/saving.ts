/**
 * @module What a suggested change saves a turn: tools/list of the default selection under the config as it is
 * and as changed, and of each session the usage saw, with its own toolsets. The log does not say whether a
 * session's URL named a toolset or got it by default: a toolset turned `default: false` is counted as gone
 * from every session that had it (so the sessions' figure is the most the change can save them).
 */
import type { Inventory, ToolDef } from "../catalog/inventory.js";
import type { Catalog } from "../catalog/types.js";
import { type Figure, listFigure } from "../report.js";
import { type Refresh, type Resolution, resolveWithRefresh } from "../resolve.js";
import { type Selection, select, selectionKey } from "../selection.js";
import type { Usage } from "./usage.js";

export interface Saving {
  /** tools/list at a URL that names nothing, before and after. */
  readonly default_selection: {
    readonly before: Figure;
    readonly after: Figure;
    readonly saved_tokens: number;
  };
  /** The usage's sessions, each with its own toolsets: the mean ≈tokens a turn saved (at most). */
  readonly sessions?: { readonly count: number; readonly mean_saved_tokens: number };
}

type ListOf = (catalog: Catalog, selection: Selection) => Promise<Figure>;

/**
 * A session's toolsets under `catalog`: the ones it had that still exist, deferred as it was or as configured;
 * without those `catalog` no longer turns on by default (`was`: the config the session was served under).
 */
function asServed(catalog: Catalog, s: Usage["selections"][number], was?: Catalog): Selection {
  const dropped = (n: string) => !!was?.toolset.get(n)?.default && catalog.toolset.get(n)?.default === false;
  const active = catalog.toolsets
    .filter((t) => s.active.includes(t.name) && !dropped(t.name))
    .map((t) => t.name);
  const deferred = active.filter((n) => s.deferred.includes(n) || catalog.toolset.get(n)?.deferred);
  return Object.freeze({ active, unknown: [], deferred, key: selectionKey(active, deferred) });
}

export async function savingOf(
  before: Catalog,
  after: Catalog,
  usage: Usage,
  listOf: ListOf,
): Promise<Saving> {
  const empty = (c: Catalog) => {
    const r = select(c, "");
    if (!r.ok) throw new Error(r.error);
    return r.selection;
  };
  const b = await listOf(before, empty(before));
  const a = await listOf(after, empty(after));
  const memo = new Map<string, Promise<number>>();
  const saved = (s: Usage["selections"][number]) => {
    const key = `${s.active.join(",")};${s.deferred.join(",")}`;
    let p = memo.get(key);
    if (!p) {
      p = Promise.all([listOf(before, asServed(before, s)), listOf(after, asServed(after, s, before))]).then(
        ([x, y]) => x.approx_tokens - y.approx_tokens,
      );
      memo.set(key, p);
    }
    return p;
  };
  const each = await Promise.all(usage.selections.map(saved));
  return {
    default_selection: { before: b, after: a, saved_tokens: b.approx_tokens - a.approx_tokens },
    ...(each.length
      ? {
          sessions: {
            count: each.length,
            mean_saved_tokens: Math.round(each.reduce((x, y) => x + y, 0) / each.length),
          },
        }
      : {}),
  };
}

/** tools/list of a selection as a session would get it (no client profile), from the given lists. */
export function listsFrom(
  inventory: Inventory,
  refresh: Refresh,
  extras: (r: Resolution) => readonly ToolDef[],
): ListOf {
  return async (catalog, selection) => {
    const { resolution } = await resolveWithRefresh(catalog, selection, inventory, refresh);
    return listFigure(resolution, extras(resolution));
  };
}
