/** @module The list results of a resolution: built once, shared by every session with that resolution. */
import type { Resolution } from "../resolve.js";
import { listedRoutes, searchToolDefs } from "../search/deferred.js";
import { INSPECT_TOOL, inspectToolDef } from "./handles.js";
import { toolsetsToolDef } from "./toolsets-tool.js";

export interface Lists {
  readonly tools: { readonly tools: readonly unknown[] };
  readonly prompts: { readonly prompts: readonly unknown[] };
  readonly resources: { readonly resources: readonly unknown[] };
  readonly templates: { readonly resourceTemplates: readonly unknown[] };
}

/** One cache per combination of the two flags. */
const caches = [0, 1, 2, 3].map(() => new WeakMap<Resolution, Lists>());

/**
 * `withToolsetsTool`: append list_server_toolsets (only when no upstream tool of that name is exposed);
 * `capture`: sessions keep captured values, so inspect_state is offered where capture applies. Tools of
 * deferred toolsets are left out; find_tools and call_tool stand in for them.
 */
export function listsOf(resolution: Resolution, withToolsetsTool: boolean, capture = true): Lists {
  const store = caches[(withToolsetsTool ? 1 : 0) + (capture ? 2 : 0)]!;
  let lists = store.get(resolution);
  if (!lists) {
    const tools: unknown[] = listedRoutes(resolution).map((r) => r.definition);
    tools.push(...searchToolDefs(resolution));
    if (withToolsetsTool) tools.push(toolsetsToolDef);
    if (capture && offersInspect(resolution)) tools.push(inspectToolDef);
    lists = Object.freeze({
      tools: { tools },
      prompts: { prompts: resolution.prompts.map((r) => r.definition) },
      resources: { resources: resolution.resources.filter((r) => !r.template).map((r) => r.definition) },
      templates: {
        resourceTemplates: resolution.resources.filter((r) => r.template).map((r) => r.definition),
      },
    });
    store.set(resolution, lists);
  }
  return lists;
}

/** inspect_state is offered when capture is on for an active tool, unless an upstream tool has that name. */
export function offersInspect(resolution: Resolution): boolean {
  return !resolution.tool.has(INSPECT_TOOL) && resolution.tools.some((r) => r.captureOverBytes !== undefined);
}
