/** @module The parts of a file that failed a check, so the compiler skips them instead of reporting their consequences. */
import type { Path } from "./source.js";

export interface Broken {
  /** True when the node at `path`, or something inside it, failed a check. */
  within(path: Path): boolean;
  /** True when the node at `path` itself failed (e.g. `upstreams:` is not a mapping). */
  at(path: Path): boolean;
  /** True when the node at `path` is a failed node or lies inside one. */
  covers(path: Path): boolean;
}

export const NOTHING_BROKEN: Broken = { within: () => false, at: () => false, covers: () => false };

export function brokenOf(paths: readonly Path[]): Broken {
  const keys = paths.map((p) => p.map(String));
  const starts = (p: readonly string[], prefix: Path) => prefix.every((seg, i) => p[i] === String(seg));
  return {
    within: (path) => keys.some((p) => p.length >= path.length && starts(p, path)),
    at: (path) => keys.some((p) => p.length === path.length && starts(p, path)),
    covers: (path) => keys.some((p) => p.length <= path.length && starts(path.map(String), p)),
  };
}

const MEMBER_LISTS = ["tools", "prompts", "resources"];

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * Removes, in place, the failed parts the compiler would trip over, keeping what it can still check:
 * a failed upstream stays (the compiler counts it as declared and skips it), so do a failed member and
 * a failed token (skipped by index, so later positions stay right); a toolset that is not a mapping
 * becomes an empty one; any other failed key of a toolset or of the top level goes.
 */
export function prune(data: unknown, paths: readonly Path[]): Obj {
  if (!isObj(data)) return {};
  for (const path of paths) {
    const [top, name, key, index] = path;
    if (top === undefined) return {};
    if (top === "upstreams" && path.length >= 2) continue;
    if (top === "auth" && name === "tokens" && typeof key === "number") continue;
    // auth: stays on when a part of it failed (toolsets' requires: still have an identity to ask for).
    if (top === "auth" && path.length >= 2 && isObj(data.auth)) {
      delete data.auth[String(name)];
      continue;
    }
    // A failed client profile is left out alone (null in its place, so later positions stay right).
    if (top === "clients" && typeof name === "number" && Array.isArray(data.clients)) {
      data.clients[name] = null;
      continue;
    }
    if (top === "toolsets" && path.length >= 2) {
      const toolsets = data.toolsets;
      if (!isObj(toolsets)) continue;
      if (path.length === 2) {
        if (String(name) in toolsets) toolsets[String(name)] = {};
        continue;
      }
      const toolset = toolsets[String(name)];
      if (!isObj(toolset)) continue;
      if (MEMBER_LISTS.includes(String(key)) && index !== undefined) continue;
      delete toolset[String(key)];
    } else delete data[String(top)];
  }
  return data;
}
