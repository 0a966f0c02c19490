/** @module The pure resolver: catalog + requested toolsets + inventory → one complete, frozen Resolution. */
import { requiresText } from "./access.js";
import { deepFreeze } from "./catalog/freeze.js";
import type { Inventory, UpstreamState } from "./catalog/inventory.js";
import type { Catalog, MemberKind } from "./catalog/types.js";
import { withCapture } from "./resolve/capture.js";
import { deferralOf } from "./resolve/defer.js";
import { definition, type Exposure, evaluate } from "./resolve/evaluate.js";
import { sessionInstructions } from "./resolve/instructions.js";
import type { Resolution, Route, Unavailable, UriRoute } from "./resolve/types.js";
import { templateRegExp } from "./resolve/uri.js";
import type { Selection } from "./selection.js";

export { isDeferred } from "./resolve/defer.js";

export type {
  Reason,
  Resolution,
  Route,
} from "./resolve/types.js";
export { routeUri } from "./resolve/uri.js";

/** Pure and deterministic: the same inputs give an equal Resolution. */
export function resolve(catalog: Catalog, selection: Selection, inventory: Inventory): Resolution {
  // Tools, prompts and resources are separate namespaces.
  const routes: Record<MemberKind, Map<string, { route: Route; toolsets: string[] }>> = {
    tool: new Map(),
    prompt: new Map(),
    resource: new Map(),
  };
  const active: string[] = [];
  const unavailable: Unavailable[] = [];
  const uriRoutes: UriRoute[] = [];
  const upstreams = new Set<string>();
  for (const name of selection.active) {
    const t = catalog.toolset.get(name);
    if (!t) continue;
    const result = evaluate(t, catalog, inventory);
    if (!Array.isArray(result)) {
      unavailable.push({ name, ...result });
      continue;
    }
    const clashes = new Set<string>();
    const mine: Exposure[] = [];
    const seen: Record<MemberKind, Map<string, Exposure>> = {
      tool: new Map(),
      prompt: new Map(),
      resource: new Map(),
    };
    for (const e of result) {
      const own = seen[e.kind].get(e.name);
      const other = routes[e.kind].get(e.name)?.route ?? own;
      if (other && (other.upstream !== e.upstream || other.original !== e.original)) clashes.add(e.name);
      if (!own) {
        seen[e.kind].set(e.name, e);
        mine.push(e);
      }
    }
    if (clashes.size) {
      const names = [...clashes];
      unavailable.push({
        name,
        reason: "conflict",
        missing: [],
        detail: `exposed name${names.length > 1 ? "s" : ""} ${names.join(", ")} already taken by another upstream's item`,
        upstreams: t.upstreams,
      });
      continue;
    }
    active.push(name);
    for (const u of t.upstreams) upstreams.add(u);
    for (const m of t.members) {
      if (m.kind === "resource" && m.regex) uriRoutes.push({ upstream: m.upstream, regex: m.regex });
    }
    for (const e of mine) {
      const existing = routes[e.kind].get(e.name);
      if (existing) {
        existing.toolsets.push(name);
        continue;
      }
      const toolsets = [name];
      const route: Route = {
        kind: e.kind,
        name: e.name,
        upstream: e.upstream,
        original: e.original,
        toolsets,
        definition: definition(e),
        ...(e.template ? { template: true } : {}),
      };
      routes[e.kind].set(e.name, { toolsets, route });
      if (e.template) uriRoutes.push({ upstream: e.upstream, regex: templateRegExp(e.name) });
    }
  }
  for (const name of selection.forbidden ?? []) unavailable.push(forbiddenEntry(catalog, name));
  const of = (kind: MemberKind) => Array.from(routes[kind].values(), (r) => withCapture(catalog, r.route));
  const tools = of("tool");
  const prompts = of("prompt");
  const resources = of("resource");
  const instructions = sessionInstructions(catalog, active);
  // Frozen by hand rather than by a deep walk: routes are new, definitions come from the inventory (frozen once).
  for (const list of [tools, prompts, resources]) {
    for (const r of list) {
      deepFreeze(r.definition);
      Object.freeze(r.toolsets);
      Object.freeze(r);
    }
  }
  return deepFreeze({
    key: selection.key,
    requested: selection.active,
    active,
    unavailable,
    tools,
    tool: new Map(tools.map((r) => [r.name, r])),
    prompts,
    prompt: new Map(prompts.map((r) => [r.name, r])),
    resources,
    resource: new Map(resources.map((r) => [r.name, r])),
    uriRoutes,
    deferred: deferralOf(catalog, selection, active, tools),
    upstreams: [...upstreams],
    ...(instructions ? { instructions } : {}),
    unknown: selection.unknown,
  });
}

/** A requested toolset the principal may not use: what it needs, never its tools. */
function forbiddenEntry(catalog: Catalog, name: string): Unavailable {
  const requires = catalog.toolset.get(name)?.requires;
  return {
    name,
    reason: "forbidden",
    missing: [],
    detail: requires ? requiresText(requires) : "",
    upstreams: [],
  };
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
