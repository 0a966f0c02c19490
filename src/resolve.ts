/** @module The pure resolver: catalog + requested toolsets + inventory → one complete, frozen Resolution. */
import { deepFreeze } from "./catalog/freeze.js";
import type { Inventory, Offer, UpstreamState } from "./catalog/inventory.js";
import { exposedName } from "./catalog/names.js";
import type { Catalog, Member, MemberKind, Toolset } from "./catalog/types.js";
import type { Selection } from "./selection.js";

type Def = { readonly [key: string]: unknown };

/** One exposed item: the name (or URI) a client uses and where the request goes. */
export interface Route<D extends Def = Def> {
  readonly kind: MemberKind;
  /** Exposed tool/prompt name, or the resource URI / URI template. */
  readonly name: string;
  readonly upstream: string;
  /** The upstream's own name (or URI). */
  readonly original: string;
  /** The toolsets that expose it (an item two packs share belongs to both). */
  readonly toolsets: readonly string[];
  /** The upstream's definition with the exposed name and overrides applied. */
  readonly definition: D;
  /** A resource template (uriTemplate) rather than a resource. */
  readonly template?: boolean;
  /** Tool results over this many bytes are kept in the session and passed by handle. */
  readonly captureOverBytes?: number;
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

/** A URI pattern a read, subscription or completion may be routed by (templates and resource globs). */
export interface UriRoute {
  readonly upstream: string;
  readonly regex: RegExp;
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
  readonly prompts: readonly Route[];
  readonly prompt: ReadonlyMap<string, Route>;
  /** Resources and templates, in one list (templates carry `template: true`). */
  readonly resources: readonly Route[];
  /** By URI or URI template. */
  readonly resource: ReadonlyMap<string, Route>;
  /** Patterns that route URIs not listed verbatim (template instances, resource globs). */
  readonly uriRoutes: readonly UriRoute[];
  /** The upstreams of the active toolsets. */
  readonly upstreams: readonly string[];
  readonly instructions?: string;
  readonly unknown: readonly string[];
}

interface Exposure {
  readonly kind: MemberKind;
  readonly name: string;
  readonly upstream: string;
  readonly original: string;
  readonly member: Member;
  readonly def: Def;
  readonly template: boolean;
}

type Ready = Extract<UpstreamState, { status: "ready" }>;

/** The items of one kind an upstream offers, with the key members match against. */
function itemsOf(state: Offer, kind: MemberKind): { key: string; def: Def; template: boolean }[] {
  const cache = itemCache.get(state)?.[kind];
  if (cache) return cache;
  let items: { key: string; def: Def; template: boolean }[];
  if (kind === "tool") items = state.tools.map((def) => ({ key: def.name, def, template: false }));
  else if (kind === "prompt") items = state.prompts.map((def) => ({ key: def.name, def, template: false }));
  else {
    items = [
      ...state.resources.map((def) => ({ key: def.uri, def, template: false })),
      ...state.templates.map((def) => ({ key: def.uriTemplate, def, template: true })),
    ];
  }
  itemCache.set(state, { ...itemCache.get(state), [kind]: items });
  return items;
}
const itemCache = new WeakMap<
  Offer,
  Partial<Record<MemberKind, { key: string; def: Def; template: boolean }[]>>
>();

const indexCache = new WeakMap<object, Map<string, { def: Def; template: boolean }>>();
function lookup(state: Offer, kind: MemberKind, key: string) {
  const items = itemsOf(state, kind);
  let index = indexCache.get(items);
  if (!index) {
    index = new Map(items.map((i) => [i.key, i]));
    indexCache.set(items, index);
  }
  return index.get(key);
}

/** What one toolset would expose against the inventory, or why it cannot be enabled. */
function evaluate(
  t: Toolset,
  catalog: Catalog,
  inventory: Inventory,
): Exposure[] | Omit<Unavailable, "name"> {
  const down = t.upstreams.filter((u) => inventory.get(u)?.status !== "ready");
  if (down.length) {
    return {
      reason: "upstream-unavailable",
      missing: [],
      detail: down
        .map((u) => {
          const s = inventory.get(u);
          return `${u}: ${s?.status === "unavailable" ? s.reason : "not started"}`;
        })
        .join("; "),
      upstreams: down,
    };
  }
  const missing: Member[] = [];
  // An exact member overrides what a glob of the same toolset would expose for that item: know them first.
  let exact: Set<string> | undefined;
  for (const m of t.members) {
    if (m.regex) continue;
    exact ??= new Set();
    exact.add(`${m.kind}\u0000${m.upstream}\u0000${m.pattern}`);
  }
  const out: Exposure[] = [];
  for (const m of t.members) {
    const state = inventory.get(m.upstream) as Ready;
    const prefix = m.kind === "resource" ? "" : (catalog.upstreams.get(m.upstream)?.prefix ?? "");
    if (!m.regex) {
      const hit = lookup(state, m.kind, m.pattern);
      if (!hit) missing.push(m);
      else out.push(expose(m, m.pattern, hit.def, hit.template, prefix));
      continue;
    }
    let hits = 0;
    for (const item of itemsOf(state, m.kind)) {
      if (!m.regex.test(item.key)) continue;
      hits++;
      if (exact?.has(`${m.kind}\u0000${m.upstream}\u0000${item.key}`)) continue;
      out.push(expose(m, item.key, item.def, item.template, prefix));
    }
    if (hits === 0 && m.required) missing.push(m);
  }
  if (missing.length) {
    return {
      reason: "missing",
      missing: missing.map((m) => m.ref),
      detail: `nothing matches ${missing.map((m) => m.ref).join(", ")}`,
      upstreams: [...new Set(missing.map((m) => m.upstream))],
    };
  }
  return out;
}

function expose(member: Member, original: string, def: Def, template: boolean, prefix: string): Exposure {
  const name = member.kind === "resource" ? original : exposedName(original, prefix, member.as);
  return { kind: member.kind, name, upstream: member.upstream, original, member, def, template };
}

function definition(e: Exposure): Def {
  const { member: m, def } = e;
  if (e.name === e.original && m.title === undefined && m.description === undefined) return def;
  return {
    ...def,
    ...(e.kind === "resource" ? {} : { name: e.name }),
    ...(m.title !== undefined ? { title: m.title } : {}),
    ...(m.description !== undefined ? { description: m.description } : {}),
  };
}

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
    upstreams: [...upstreams],
    ...(instructions ? { instructions } : {}),
    unknown: selection.unknown,
  });
}

/** The capture limit of a tool (its upstream's or any of its toolsets', the smallest), told in its description. */
function withCapture(catalog: Catalog, route: Route): Route {
  if (route.kind !== "tool" || !capturesAnything(catalog)) return route;
  const limits = [
    catalog.upstreams.get(route.upstream)?.captureOverBytes,
    ...route.toolsets.map((t) => catalog.toolset.get(t)?.captureOverBytes),
  ].filter((n): n is number => n !== undefined);
  if (!limits.length) return route;
  const overBytes = Math.min(...limits);
  // A captured result has no structuredContent for the model, so an outputSchema would make clients reject it.
  const { outputSchema: _o, ...def } = route.definition as Def & { description?: string };
  const note = `Results over ${overBytes} bytes come back as a handle like @state:${route.toolsets[0]}/${route.name}/1: pass the handle as an argument to any tool instead of the value, or read parts of it with inspect_state.`;
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

/** `test://template/{id}/data` → a RegExp matching its instances (RFC 6570 level 1: `{x}` is one segment). */
export function templateRegExp(template: string): RegExp {
  const parts = template.split(/\{[^}]*\}/).map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${parts.join("[^/]+")}$`);
}

/** The upstream a URI belongs to in this resolution, or undefined. */
export function routeUri(resolution: Resolution, uri: string): string | undefined {
  const exact = resolution.resource.get(uri);
  if (exact) return exact.upstream;
  return resolution.uriRoutes.find((r) => r.regex.test(uri))?.upstream;
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
