/** @module A catalog with capture switched off: for sessions that cannot keep values (stateless serving). */
import type { Catalog, Toolset, Upstream } from "./types.js";

const cache = new WeakMap<Catalog, Catalog>();

/** The same catalog, but no upstream or toolset captures: results pass as sent, and no tool says otherwise. */
export function withoutCapture(catalog: Catalog): Catalog {
  let out = cache.get(catalog);
  if (out) return out;
  const strip = <T extends { captureOverBytes?: number }>(x: T): T => {
    if (x.captureOverBytes === undefined) return x;
    const { captureOverBytes: _c, ...rest } = x;
    return Object.freeze(rest) as T;
  };
  const toolsets: Toolset[] = catalog.toolsets.map(strip);
  const upstreams = new Map<string, Upstream>([...catalog.upstreams].map(([k, u]) => [k, strip(u)]));
  out = Object.freeze({
    ...catalog,
    toolsets: Object.freeze(toolsets),
    toolset: new Map(toolsets.map((t) => [t.name, t])),
    upstreams,
  });
  cache.set(catalog, out);
  return out;
}
