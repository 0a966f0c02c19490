/** @module Capture limits on tools: the limit that applies to a route, and the note that tells the model. */
import type { Catalog } from "../catalog/types.js";
import type { Def, Route } from "./types.js";

/** The capture limit of a tool (its upstream's or any of its toolsets', the smallest), told in its description. */
export function withCapture(catalog: Catalog, route: Route): Route {
  if (route.kind !== "tool" || !capturesAnything(catalog)) return route;
  const limits = [
    catalog.upstreams.get(route.upstream)?.captureOverBytes,
    ...route.toolsets.map((t) => catalog.toolset.get(t)?.captureOverBytes),
  ].filter((n): n is number => n !== undefined);
  if (!limits.length) return route;
  const overBytes = Math.min(...limits);
  // A captured result has no structuredContent for the model, so an outputSchema would make clients reject it.
  const { outputSchema: _o, ...def } = route.definition as Def & { description?: string };
  const note = captureNote({ ...route, captureOverBytes: overBytes });
  return {
    ...route,
    captureOverBytes: overBytes,
    definition: { ...def, description: def.description ? `${def.description}\n\n${note}` : note },
  };
}

const captureCache = new WeakMap<Catalog, boolean>();
function capturesAnything(catalog: Catalog): boolean {
  let on = captureCache.get(catalog);
  if (on === undefined) {
    on =
      catalog.toolsets.some((t) => t.captureOverBytes !== undefined) ||
      [...catalog.upstreams.values()].some((u) => u.captureOverBytes !== undefined);
    captureCache.set(catalog, on);
  }
  return on;
}

/** What a captured tool's description ends with (after a blank line), so the model passes handles on. */
export function captureNote(route: Pick<Route, "name" | "toolsets" | "captureOverBytes">): string {
  return `Results over ${route.captureOverBytes} bytes come back as a handle like @state:${route.toolsets[0]}/${route.name}/1: pass the handle as an argument to any tool instead of the value, or read parts of it with inspect_state.`;
}
