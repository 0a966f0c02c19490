/**
 * @module One evaluation: the tasks searched with the very find_tools search a session of the selection runs
 * (the index of its deferred tools, `buildIndex(searchEntries(resolution))`, queried as find_tools queries
 * it), after checking that each expected tool is one that search can find.
 */
import type { Catalog } from "../catalog/types.js";
import type { Resolution } from "../resolve.js";
import { buildIndex } from "../search/build.js";
import { searchEntries } from "../search/deferred.js";
import type { Selection } from "../selection.js";
import { RANK_DEPTH, type Scores, scoreTasks } from "./score.js";
import type { Task } from "./tasks.js";

export type Evaluated =
  | { ok: true; scores: Scores; tools: number; toolsets: readonly string[] }
  | { ok: false; errors: string[] };

/** Every toolset active; every one deferred with `deferAll`, else as the config defers them. */
export function wholeCatalog(catalog: Catalog, deferAll: boolean): Selection {
  const active = catalog.toolsets.map((t) => t.name);
  const deferred = catalog.toolsets.filter((t) => deferAll || t.deferred).map((t) => t.name);
  return Object.freeze({
    active: Object.freeze(active),
    unknown: Object.freeze([]),
    deferred: Object.freeze(deferred),
    key: `${active.join(",")};defer=${deferred.join(",")}`,
  });
}

/** The tools find_tools searches in this resolution, each with the toolset it is first offered by. */
export function searchedTools(resolution: Resolution): { name: string; toolset: string }[] {
  const seen = new Map<string, string>();
  for (const e of searchEntries(resolution)) if (!seen.has(e.name)) seen.set(e.name, e.toolset);
  return [...seen].map(([name, toolset]) => ({ name, toolset }));
}

export function evaluateTasks(resolution: Resolution, tasks: readonly Task[]): Evaluated {
  const entries = searchEntries(resolution);
  const toolsetOf = new Map<string, string>();
  for (const e of entries) if (!toolsetOf.has(e.name)) toolsetOf.set(e.name, e.toolset);
  const deferred = resolution.deferred.map((d) => d.name);
  const errors: string[] = [];
  if (!entries.length)
    errors.push(
      "the selection defers no tool, so find_tools searches nothing (add defer=all, or defer=NAME, to --select)",
    );
  for (const t of tasks) {
    for (const name of t.expect)
      if (entries.length && !toolsetOf.has(name))
        errors.push(`${t.where}: expected tool "${name}" is not one find_tools searches in this selection`);
    if (t.toolset !== undefined && !deferred.includes(t.toolset))
      errors.push(
        `${t.where}: toolset "${t.toolset}" is not deferred in this selection (deferred: ${deferred.join(", ") || "none"})`,
      );
  }
  if (errors.length) return { ok: false, errors };
  const index = buildIndex(entries);
  const search = (query: string, toolset?: string) =>
    index
      .search(query, toolset === undefined ? { limit: RANK_DEPTH } : { limit: RANK_DEPTH, toolset })
      .tools.map((h) => h.name);
  const groupOf = (t: Task) => t.toolset ?? toolsetOf.get(t.expect[0]!)!;
  const scores = scoreTasks(tasks, search, groupOf, deferred);
  return { ok: true, scores, tools: toolsetOf.size, toolsets: deferred };
}
