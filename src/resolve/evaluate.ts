/** @module One toolset against the inventory: the items it would expose, or why it cannot be enabled. */
import type { Inventory, Offer, UpstreamState } from "../catalog/inventory.js";
import { exposedName } from "../catalog/names.js";
import type { Catalog, Member, MemberKind, Toolset } from "../catalog/types.js";
import type { Def, Unavailable } from "./types.js";

/** One item a toolset would expose, before the resolver checks it against the other toolsets. */
export interface Exposure {
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
export function evaluate(
  t: Toolset,
  catalog: Catalog,
  inventory: Inventory,
): Exposure[] | Omit<Unavailable, "name"> {
  const down = t.upstreams.filter((u) => inventory.get(u)?.status !== "ready");
  if (down.length) {
    // Down only because a person has to authorize toolpacks (OAuth): say so, and where.
    const url = down.map((u) => {
      const s = inventory.get(u);
      return s?.status === "unavailable" ? s.authorizeUrl : undefined;
    });
    const waiting = url.every((x) => x !== undefined);
    return {
      reason: waiting ? "authorization_required" : "upstream-unavailable",
      ...(waiting ? { url: url[0]! } : {}),
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

export function definition(e: Exposure): Def {
  const { member: m, def } = e;
  if (e.name === e.original && m.title === undefined && m.description === undefined) return def;
  return {
    ...def,
    ...(e.kind === "resource" ? {} : { name: e.name }),
    ...(m.title !== undefined ? { title: m.title } : {}),
    ...(m.description !== undefined ? { description: m.description } : {}),
  };
}
