/** @module The pure resolver: catalog + requested toolsets + inventory → one complete, frozen Resolution. */
import { deepFreeze } from "./catalog/freeze.js";
import type { Inventory, ToolDef, UpstreamState } from "./catalog/inventory.js";
import { exposedName } from "./catalog/names.js";
import type { Catalog, Member, Toolset } from "./catalog/types.js";
import type { Selection } from "./selection.js";

/** One exposed tool: the name a client calls and where the call goes. */
export interface Route {
  readonly name: string;
  readonly upstream: string;
  readonly original: string;
  /** The toolsets that expose it (a tool two packs share belongs to both). */
  readonly toolsets: readonly string[];
  /** The upstream's definition with the exposed name and overrides applied. */
  readonly definition: ToolDef;
}

export type Reason = "missing" | "upstream-unavailable" | "conflict";

export interface Unavailable {
  readonly name: string;
  readonly reason: Reason;
  /** Member refs that match nothing (reason "missing"). */
  readonly missing: readonly string[];
  /** Human-readable: which upstream is down and why, or which names collide. */
  readonly detail: string;
  /** The upstreams involved, for the gate and for logs. */
  readonly upstreams: readonly string[];
}

export interface Resolution {
  /** The selection's canonical key. */
  readonly key: string;
  /** Requested toolsets, catalog order. */
  readonly requested: readonly string[];
  /** Requested toolsets that are enabled: every member satisfied, upstreams up, no collision. */
  readonly active: readonly string[];
  readonly unavailable: readonly Unavailable[];
  readonly tools: readonly Route[];
  readonly tool: ReadonlyMap<string, Route>;
  readonly instructions?: string;
  readonly unknown: readonly string[];
}

interface Exposure {
  readonly name: string;
  readonly upstream: string;
  readonly original: string;
  readonly member: Member;
  readonly def: ToolDef;
}

const indexCache = new WeakMap<readonly ToolDef[], Map<string, ToolDef>>();
function byName(tools: readonly ToolDef[]): Map<string, ToolDef> {
  let index = indexCache.get(tools);
  if (!index) {
    index = new Map(tools.map((t) => [t.name, t]));
    indexCache.set(tools, index);
  }
  return index;
}

/** What one toolset would expose against the inventory, or why it cannot be enabled. */
function evaluate(
  t: Toolset,
  catalog: Catalog,
  inventory: Inventory,
): Exposure[] | Omit<Unavailable, "name"> {
  const down = t.upstreams
    .map((u) => [u, inventory.get(u)] as const)
    .filter(
      (e): e is readonly [string, Exclude<UpstreamState, { status: "ready" }> | undefined] =>
        e[1]?.status !== "ready",
    );
  if (down.length) {
    return {
      reason: "upstream-unavailable",
      missing: [],
      detail: down.map(([u, s]) => `${u}: ${s ? s.reason : "not started"}`).join("; "),
      upstreams: down.map(([u]) => u),
    };
  }
  const missing: Member[] = [];
  const exact = new Map<string, Exposure>();
  const globbed: Exposure[] = [];
  for (const m of t.members) {
    const state = inventory.get(m.upstream) as Extract<UpstreamState, { status: "ready" }>;
    const prefix = catalog.upstreams.get(m.upstream)?.prefix ?? "";
    if (!m.regex) {
      const def = byName(state.tools).get(m.pattern);
      if (!def) missing.push(m);
      else exact.set(`${m.upstream}\u0000${m.pattern}`, expose(def, m, prefix));
      continue;
    }
    let hits = 0;
    for (const def of state.tools) {
      if (!m.regex.test(def.name)) continue;
      hits++;
      globbed.push(expose(def, m, prefix));
    }
    if (hits === 0 && m.required) missing.push(m);
  }
  if (missing.length) {
    return {
      reason: "missing",
      missing: missing.map((m) => m.ref),
      detail: `no tool matches ${missing.map((m) => m.ref).join(", ")}`,
      upstreams: [...new Set(missing.map((m) => m.upstream))],
    };
  }
  // An exact member overrides what a glob of the same toolset would expose for that tool.
  const fromGlobs = globbed.filter((e) => !exact.has(`${e.upstream}\u0000${e.original}`));
  return [...fromGlobs, ...exact.values()].sort((a, b) => order(t, a) - order(t, b));
}

function order(t: Toolset, e: Exposure): number {
  return t.members.indexOf(e.member);
}

function expose(def: ToolDef, member: Member, prefix: string): Exposure {
  return {
    name: exposedName(def.name, prefix, member.as),
    upstream: member.upstream,
    original: def.name,
    member,
    def,
  };
}

function definition(e: Exposure): ToolDef {
  const { member: m, def } = e;
  if (e.name === def.name && m.title === undefined && m.description === undefined) return def;
  return {
    ...def,
    name: e.name,
    ...(m.title !== undefined ? { title: m.title } : {}),
    ...(m.description !== undefined ? { description: m.description } : {}),
  };
}

/** Pure and deterministic: the same inputs give an equal Resolution. */
export function resolve(catalog: Catalog, selection: Selection, inventory: Inventory): Resolution {
  const routes = new Map<string, { route: Route; toolsets: string[] }>();
  const active: string[] = [];
  const unavailable: Unavailable[] = [];
  for (const name of selection.active) {
    const t = catalog.toolset.get(name);
    if (!t) continue;
    const result = evaluate(t, catalog, inventory);
    if (!Array.isArray(result)) {
      unavailable.push({ name, ...result });
      continue;
    }
    const clashes = new Set<string>();
    const mine = new Map<string, Exposure>();
    for (const e of result) {
      const other = routes.get(e.name)?.route ?? mine.get(e.name);
      if (other && (other.upstream !== e.upstream || other.original !== e.original)) clashes.add(e.name);
      if (!mine.has(e.name)) mine.set(e.name, e);
    }
    if (clashes.size) {
      const names = [...clashes];
      unavailable.push({
        name,
        reason: "conflict",
        missing: [],
        detail: `exposed name${names.length > 1 ? "s" : ""} ${names.join(", ")} already taken by another tool`,
        upstreams: t.upstreams,
      });
      continue;
    }
    active.push(name);
    for (const e of mine.values()) {
      const existing = routes.get(e.name);
      if (existing) existing.toolsets.push(name);
      else {
        const toolsets = [name];
        routes.set(e.name, {
          toolsets,
          route: {
            name: e.name,
            upstream: e.upstream,
            original: e.original,
            toolsets,
            definition: definition(e),
          },
        });
      }
    }
  }
  const tools = [...routes.values()].map((r) => r.route);
  const instructions = sessionInstructions(catalog, active);
  return deepFreeze({
    key: selection.key,
    requested: selection.active,
    active,
    unavailable,
    tools,
    tool: new Map(tools.map((r) => [r.name, r])),
    ...(instructions ? { instructions } : {}),
    unknown: selection.unknown,
  });
}

/** Host instructions, then `## <title>` sections for active toolsets with instructions, by name. */
export function sessionInstructions(catalog: Catalog, active: readonly string[]): string | undefined {
  const parts: string[] = [];
  if (catalog.instructions) parts.push(catalog.instructions);
  const sections = active
    .map((n) => catalog.toolset.get(n))
    .filter((t): t is Toolset => !!t?.instructions)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const t of sections) parts.push(`## ${t.title}\n\n${t.instructions}`);
  return parts.length ? parts.join("\n\n") : undefined;
}

export type Refresh = (upstream: string) => Promise<UpstreamState>;

/**
 * The enable gate: resolve; for every pack short of members, refresh those upstreams' inventories (a stale
 * cache must not switch a pack off), resolve again; what is still missing stays reported, never half-enabled.
 */
export async function resolveWithRefresh(
  catalog: Catalog,
  selection: Selection,
  inventory: Inventory,
  refresh: Refresh,
): Promise<{ resolution: Resolution; inventory: Inventory }> {
  const first = resolve(catalog, selection, inventory);
  const stale = new Set(first.unavailable.filter((u) => u.reason === "missing").flatMap((u) => u.upstreams));
  if (!stale.size) return { resolution: first, inventory };
  const next = new Map(inventory);
  const states = await Promise.all([...stale].map(async (u) => [u, await refresh(u)] as const));
  for (const [u, state] of states) next.set(u, state);
  return { resolution: resolve(catalog, selection, next), inventory: next };
}
