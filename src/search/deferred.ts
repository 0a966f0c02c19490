/** @module What a resolution with deferred toolsets lists and searches: the listed tools, find_tools/call_tool, the index entries. */
import type { ToolDef } from "../catalog/inventory.js";
import { isDeferred, type Resolution, type Route } from "../resolve.js";
import { deferredToolDefs } from "./tools.js";
import type { SearchEntry } from "./types.js";

const deferredSets = new WeakMap<Resolution, ReadonlySet<string>>();

/** The names of the resolution's deferred toolsets. */
export function deferredSet(resolution: Resolution): ReadonlySet<string> {
  let set = deferredSets.get(resolution);
  if (!set) {
    set = new Set(resolution.deferred.map((d) => d.name));
    deferredSets.set(resolution, set);
  }
  return set;
}

/** The routes tools/list shows: those with at least one active toolset that is not deferred. */
export function listedRoutes(resolution: Resolution): readonly Route[] {
  if (!resolution.deferred.length) return resolution.tools;
  const deferred = deferredSet(resolution);
  return resolution.tools.filter((r) => !isDeferred(deferred, r));
}

/**
 * find_tools and call_tool, when a deferred toolset is active; each one only if no upstream tool of the
 * selection is exposed under its name (the upstream's tool wins, as with list_server_toolsets).
 */
export function searchToolDefs(resolution: Resolution): readonly ToolDef[] {
  if (!resolution.deferred.length) return [];
  return deferredToolDefs.filter((d) => !resolution.tool.has(d.name));
}

/** Whether `name` is our find_tools or call_tool in this resolution (not an upstream tool of that name). */
export function offersSearchTool(resolution: Resolution, name: string): boolean {
  return (
    resolution.deferred.length > 0 &&
    !resolution.tool.has(name) &&
    deferredToolDefs.some((d) => d.name === name)
  );
}

/** What find_tools searches: every tool of every active deferred toolset, once per such toolset. */
export function searchEntries(resolution: Resolution): SearchEntry[] {
  const entries: SearchEntry[] = [];
  if (!resolution.deferred.length) return entries;
  const byName = new Map(resolution.deferred.map((d) => [d.name, d]));
  for (const route of resolution.tools) {
    const def = route.definition as ToolDef;
    for (const t of route.toolsets) {
      const d = byName.get(t);
      if (!d) continue;
      entries.push({
        name: route.name,
        ...(typeof def.title === "string" ? { title: def.title } : {}),
        ...(typeof def.description === "string" ? { description: def.description } : {}),
        inputSchema: def.inputSchema,
        toolset: d.name,
        toolsetTitle: d.title,
        toolsetDescription: d.description,
      });
    }
  }
  return entries;
}
