/** @module The list results of a resolution: built once, shared by every session with that resolution. */
import type { ToolDef } from "../catalog/inventory.js";
import type { Logger } from "../log.js";
import type { Resolution } from "../resolve.js";
import { listsUpstreamTool, shadowedSearchTools } from "../search/deferred.js";
import { INSPECT_TOOL, inspectToolDef } from "./handles.js";
import type { ToolRegistry } from "./tools/registry.js";
import { TOOLSETS_TOOL, toolsetsToolDef } from "./toolsets-tool.js";

export interface Lists {
  readonly tools: { readonly tools: readonly unknown[] };
  readonly prompts: { readonly prompts: readonly unknown[] };
  readonly resources: { readonly resources: readonly unknown[] };
  readonly templates: { readonly resourceTemplates: readonly unknown[] };
}

/** The lists of each tool registry (one per resolution and set of built-ins). */
const cache = new WeakMap<ToolRegistry, Lists>();

/**
 * The lists a session of this resolution answers: its registry's tools (deferred toolsets left out; find_tools and
 * call_tool stand in for them; the proxy's own tools last), prompts, resources and templates.
 */
export function listsOf(resolution: Resolution, registry: ToolRegistry): Lists {
  let lists = cache.get(registry);
  if (!lists) {
    lists = Object.freeze({
      tools: { tools: registry.listed },
      prompts: { prompts: resolution.prompts.map((r) => r.definition) },
      resources: { resources: resolution.resources.filter((r) => !r.template).map((r) => r.definition) },
      templates: {
        resourceTemplates: resolution.resources.filter((r) => r.template).map((r) => r.definition),
      },
    });
    cache.set(registry, lists);
  }
  return lists;
}

/**
 * The proxy's own tools that follow find_tools/call_tool in a session's list: list_server_toolsets (when the
 * caller offers it), then inspect_state (with capture, where it applies). /toolsets counts the same ones.
 */
export function ownToolDefs(resolution: Resolution, withToolsetsTool: boolean, capture: boolean): ToolDef[] {
  const defs: ToolDef[] = [];
  if (withToolsetsTool) defs.push(toolsetsToolDef);
  if (capture && offersInspect(resolution)) defs.push(inspectToolDef);
  return defs;
}

/** The shadowing already said to each logger, by upstream and tool: once each, not once per session. */
const warned = new WeakMap<Logger, Set<string>>();

/**
 * Says in the log (once per upstream tool and logger) that a listed upstream tool takes find_tools' or
 * call_tool's name while toolsets are deferred: the upstream's tool is served under it, and ours is not offered.
 * Per-session instances compute a resolution per session: the same warning for each would flood the log.
 */
export function warnShadowed(logger: Logger, resolution: Resolution): void {
  const shadowed = shadowedSearchTools(resolution);
  if (!shadowed.length) return;
  const said = warned.get(logger) ?? new Set<string>();
  warned.set(logger, said);
  for (const t of shadowed) {
    const key = `${t.upstream}\u0000${t.name}`;
    if (said.has(key)) continue;
    said.add(key);
    logger.warn(`a listed upstream tool shadows ${t.name} beside deferred toolsets: ${t.detail}`, {
      tool: t.name,
      upstream: t.upstream,
      toolsets: t.toolsets,
      selection: resolution.key,
      fix: `rename it with "as:", or give upstream ${t.upstream} a "prefix:"`,
    });
  }
}

/** list_server_toolsets is offered (unless turned off) when no listed upstream tool has that name. */
export function offersToolsetsTool(resolution: Resolution): boolean {
  return !listsUpstreamTool(resolution, TOOLSETS_TOOL);
}

/** inspect_state is offered when capture is on for an active tool, unless a listed upstream tool has that name. */
export function offersInspect(resolution: Resolution): boolean {
  return (
    !listsUpstreamTool(resolution, INSPECT_TOOL) &&
    resolution.tools.some((r) => r.captureOverBytes !== undefined)
  );
}
