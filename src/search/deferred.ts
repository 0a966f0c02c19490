/** @module What a resolution with deferred toolsets lists and searches: the listed tools, find_tools/call_tool, the index entries. */
import type { ToolDef } from "../catalog/inventory.js";
import { isDeferred, type Resolution, type Route } from "../resolve.js";
import { CALL_TOOL, callToolDefBeside, deferredToolDefs, FIND_TOOLS, findToolsDefBeside } from "./tools.js";
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
 * Whether an upstream tool of this exposed name is in tools/list. Only a listed one takes the name of a
 * built-in tool (find_tools, call_tool, list_server_toolsets, inspect_state): a deferred one is not in the list,
 * so the name the model sees there stays the built-in's (the deferred tool is reached through call_tool).
 */
export function listsUpstreamTool(resolution: Resolution, name: string): boolean {
  const route = resolution.tool.get(name);
  return route !== undefined && !isDeferred(deferredSet(resolution), route);
}

/**
 * Whether the session searches anything: a deferred toolset is active, or its client's profile cut a listed
 * tool's description (find_tools then returns the whole of it).
 */
function searches(resolution: Resolution): boolean {
  return resolution.deferred.length > 0 || (resolution.profile?.cut.length ?? 0) > 0;
}

/**
 * find_tools and call_tool, when the session searches anything; each one only if no listed upstream tool has
 * its name (the upstream's tool wins, as with list_server_toolsets). When one is taken, the other's description
 * does not point at it.
 */
export function searchToolDefs(resolution: Resolution): readonly ToolDef[] {
  if (!searches(resolution)) return [];
  const find = !listsUpstreamTool(resolution, FIND_TOOLS);
  const call = !listsUpstreamTool(resolution, CALL_TOOL);
  if (find && call) return deferredToolDefs;
  return find ? [findToolsDefBeside] : call ? [callToolDefBeside] : [];
}

/** Whether `name` is our find_tools or call_tool in this resolution (not a listed upstream tool of that name). */
export function offersSearchTool(resolution: Resolution, name: string): boolean {
  return (
    searches(resolution) &&
    (name === FIND_TOOLS || name === CALL_TOOL) &&
    !listsUpstreamTool(resolution, name)
  );
}

/** A listed upstream tool that takes the name of our find_tools or call_tool while toolsets are deferred. */
export interface ShadowedTool {
  readonly name: string;
  readonly upstream: string;
  /** The active toolsets that list it. */
  readonly toolsets: readonly string[];
  /** What is lost, for people and models. */
  readonly detail: string;
}

/** What is lost when a listed upstream tool takes find_tools' or call_tool's name. */
export function shadowLoss(name: string): string {
  return name === FIND_TOOLS
    ? "the deferred tools cannot be searched"
    : "the deferred tools can only be called by their own names";
}

/** Listed upstream tools that take find_tools' or call_tool's name while toolsets are deferred. */
export function shadowedSearchTools(resolution: Resolution): ShadowedTool[] {
  if (!searches(resolution)) return [];
  const deferred = deferredSet(resolution);
  return [FIND_TOOLS, CALL_TOOL].flatMap((name) => {
    const route = resolution.tool.get(name);
    // The toolsets that list it: the active ones that are not deferred.
    const toolsets = route?.toolsets.filter((t) => !deferred.has(t)) ?? [];
    if (!route || !toolsets.length) return [];
    const detail = `upstream ${route.upstream}'s tool ${name} takes the name: toolpacks' own ${name} is not offered, so ${shadowLoss(name)}`;
    return [{ name, upstream: route.upstream, toolsets, detail }];
  });
}

/**
 * What find_tools searches: every tool of every active deferred toolset, once per such toolset, and every
 * listed tool whose description the client's profile cut, under the toolsets that list it; each with its
 * whole definition.
 */
export function searchEntries(resolution: Resolution): SearchEntry[] {
  const entries: SearchEntry[] = [];
  if (!searches(resolution)) return entries;
  const byName = new Map(resolution.deferred.map((d) => [d.name, d]));
  const deferred = deferredSet(resolution);
  const cutIn = new Map(resolution.profile?.cutIn.map((d) => [d.name, d]));
  for (const route of resolution.tools) {
    const def = (route.fullDefinition ?? route.definition) as ToolDef;
    const listed = route.fullDefinition !== undefined && !isDeferred(deferred, route);
    for (const t of route.toolsets) {
      const d = byName.get(t) ?? (listed ? cutIn.get(t) : undefined);
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
