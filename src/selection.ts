/** @module The URL decides: a query string becomes the set of active toolsets, unknown names and a canonical key. */
import type { ClientProfile } from "./catalog/client-profile.js";

/**
 * What selecting reads of a catalog: each toolset's name and flags, in order. A Catalog is one; so is the browser
 * console's copy of them (src/console/spelling.ts), which spells URLs by these same rules (and so this module
 * imports nothing at run time: it is bundled into the page).
 */
export interface SelectionCatalog {
  readonly toolsets: readonly {
    readonly name: string;
    readonly default: boolean;
    readonly always: boolean;
    readonly deferred: boolean;
  }[];
  readonly toolset: { has(name: string): boolean };
}

/** What a hostile query may cost: longer queries and more names are refused with a clear error. */
export const LIMITS = Object.freeze({ queryLength: 8192, names: 256 });

export interface ParsedQuery {
  /** Names added to the defaults (bare keys, `key=value` keys, `toolsets=`). */
  readonly add: readonly string[];
  /** Set when `only` appears (even empty): then `add` is ignored. */
  readonly only?: readonly string[];
  readonly without: readonly string[];
  /** Toolsets to defer behind find_tools (`defer=`); `all` stands for every one. */
  readonly defer: readonly string[];
  /** Every name in the order it appeared, for reporting unknown ones. */
  readonly named: readonly string[];
  /** True when the query selects nothing (only ignored keys, `defer`, or nothing). */
  readonly empty: boolean;
}

export type ParseResult = { ok: true; query: ParsedQuery } | { ok: false; error: string };

export interface SelectionOptions {
  /** Query keys that belong to someone else (`scopes`), never read as names. */
  readonly ignoreKeys?: readonly string[];
  /** What an empty query gets, in URL spelling (`only=docs`); default: each toolset's own default. */
  readonly defaultSelection?: string;
}

export interface Selection {
  /** Requested toolsets, in catalog order (whether they will be enabled is the resolver's call). */
  readonly active: readonly string[];
  /** Names the catalog does not know, first appearance order, no duplicates. */
  readonly unknown: readonly string[];
  /**
   * Active toolsets whose tools are deferred behind find_tools, by config (`deferred: true`) or by the URL
   * (`defer=`, never an `always` toolset), in catalog order. Automatic deferral is the resolver's call.
   */
  readonly deferred: readonly string[];
  /** Same key ⇔ same active and deferred sets: `?a&b`, `?b&a` and `?toolsets=a,b` share it. */
  readonly key: string;
  /** Requested toolsets the principal does not meet (`requires:`), catalog order: never active (access.ts). */
  readonly forbidden?: readonly string[];
  /** Every toolset the principal does not meet, requested or not, catalog order: for its report. */
  readonly denied?: readonly string[];
  /**
   * Active toolsets the URL itself names (a bare key, `toolsets=`, `only=`), catalog order: a client profile
   * defers them last. Absent when the URL names none (the defaults, a default selection).
   */
  readonly explicit?: readonly string[];
  /**
   * Some toolset of the catalog has `requires:` (set by `withAccess`): what a selection gets then depends on who
   * asks, so no answer of it may be marked shareable (2026-07-28 `cacheScope`).
   */
  readonly gated?: true;
  /** The client's profile (clients/select.ts): what the resolution of this selection is fitted to. */
  readonly profile?: ClientProfile;
}

/** Reserved keys whose value (not the key) holds the names. */
const VALUED_KEYS: ReadonlySet<string> = new Set(["toolsets", "only", "without", "defer"]);
/** `defer=all`: every active toolset but the always ones. */
export const DEFER_ALL = "all";

function decode(s: string): string {
  const plus = s.replace(/\+/g, " ");
  try {
    return decodeURIComponent(plus);
  } catch {
    return plus;
  }
}

function split(value: string): string[] {
  return value.split(/[\s,]+/).filter(Boolean);
}

/** Parses a query string (with or without the leading `?`). Never throws. */
export function parseQuery(query: string, ignoreKeys: readonly string[] = []): ParseResult {
  const q = query.startsWith("?") ? query.slice(1) : query;
  if (q.length > LIMITS.queryLength) {
    return { ok: false, error: `query string too long (${q.length} > ${LIMITS.queryLength} characters)` };
  }
  const add: string[] = [];
  const without: string[] = [];
  const defer: string[] = [];
  const named: string[] = [];
  let only: string[] | undefined;
  let empty = true;
  for (const part of q.split("&")) {
    if (!part) continue;
    const eq = part.indexOf("=");
    const key = decode(eq < 0 ? part : part.slice(0, eq)).trim();
    const value = eq < 0 ? "" : decode(part.slice(eq + 1));
    if (!key || ignoreKeys.includes(key)) continue;
    const names = split(VALUED_KEYS.has(key) ? value : key);
    // defer= says how the selection is served, not what it selects: it leaves the query "empty".
    if (key !== "defer") empty = false;
    if (key === "defer") defer.push(...names);
    else if (key === "only") {
      only ??= [];
      only.push(...names);
    } else if (key === "without") without.push(...names);
    else add.push(...names);
    named.push(...(key === "defer" ? names.filter((n) => n !== DEFER_ALL) : names));
    if (named.length > LIMITS.names) {
      return { ok: false, error: `too many toolset names in the query (more than ${LIMITS.names})` };
    }
  }
  return { ok: true, query: { add, ...(only ? { only } : {}), without, defer, named, empty } };
}

/**
 * The active set: `only` (plus every always toolset) or the defaults plus the added names; then `without`,
 * which cannot drop an always toolset. Unknown names are served around and reported.
 */
function selectToolsets(
  catalog: SelectionCatalog,
  query: ParsedQuery,
  defaultQuery?: ParsedQuery,
): Selection {
  const base = query.empty && defaultQuery ? defaultQuery : query;
  const want = new Set<string>();
  if (base.only) {
    for (const n of base.only) want.add(n);
  } else {
    for (const t of catalog.toolsets) if (t.default) want.add(t.name);
    for (const n of base.add) want.add(n);
  }
  for (const n of base.without) want.delete(n);
  const picked = catalog.toolsets.filter((t) => t.always || want.has(t.name));
  // The URL's own defer= applies whether it names toolsets or falls back to the default selection.
  const defer = new Set(base === query ? query.defer : [...query.defer, ...base.defer]);
  const deferred = picked
    .filter((t) => t.deferred || (!t.always && (defer.has(DEFER_ALL) || defer.has(t.name))))
    .map((t) => t.name);
  const active = picked.map((t) => t.name);
  const asked = base === query ? new Set(query.only ?? query.add) : new Set<string>();
  const explicit = active.filter((n) => asked.has(n));
  const unknown: string[] = [];
  for (const n of base === query ? base.named : [...query.named, ...base.named]) {
    if (!catalog.toolset.has(n) && !unknown.includes(n)) unknown.push(n);
  }
  return Object.freeze({
    active: Object.freeze(active),
    unknown: Object.freeze(unknown),
    deferred: Object.freeze(deferred),
    key: selectionKey(active, deferred),
    ...(explicit.length ? { explicit: Object.freeze(explicit) } : {}),
  });
}

/** The canonical key: the active set, and the deferred one when any (`a,b;defer=b`). */
export function selectionKey(active: readonly string[], deferred: readonly string[]): string {
  return deferred.length ? `${active.join(",")};defer=${deferred.join(",")}` : active.join(",");
}

export type SelectResult = { ok: true; selection: Selection } | { ok: false; error: string };

/** Query string → selection, applying the deployment's options. Never throws. */
export function select(
  catalog: SelectionCatalog,
  query: string,
  options: SelectionOptions = {},
): SelectResult {
  const parsed = parseQuery(query, options.ignoreKeys);
  if (!parsed.ok) return parsed;
  let fallback: ParsedQuery | undefined;
  if (options.defaultSelection !== undefined) {
    const d = parseQuery(options.defaultSelection);
    if (!d.ok) return { ok: false, error: `default selection: ${d.error}` };
    fallback = d.query;
  }
  return { ok: true, selection: selectToolsets(catalog, parsed.query, fallback) };
}
