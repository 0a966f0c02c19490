/**
 * @module The shortest query string that asks for a set of toolsets (SPEC §3), checked by the selection rules
 * themselves: every candidate spelling is read back with `select` and only one that gives exactly the wanted
 * set (and deferral) is kept. Pure: the browser console runs it as switches move, the tests run it in Node.
 */
import { DEFER_ALL, type SelectionCatalog, select } from "../selection.js";

export interface SpellToolset {
  readonly name: string;
  readonly default: boolean;
  readonly always: boolean;
  /** `deferred: true` in the config: deferred whenever active, whatever the URL says. */
  readonly deferred: boolean;
}

/** How the server reads a URL: its toolsets, and the deployment's options (SPEC §3.2). */
export interface SpellContext {
  /** In catalog order. */
  readonly toolsets: readonly SpellToolset[];
  /** `serve --toolsets`: what a URL naming nothing gets (HTTP only; a stdio `--toolsets` has none). */
  readonly defaultSelection?: string | undefined;
  readonly ignoreKeys?: readonly string[] | undefined;
}

export interface Wanted {
  /** Toolsets switched on (the always ones are on anyway). */
  readonly on: Iterable<string>;
  /** Of those, the ones to defer with `defer=` (a config-deferred toolset is deferred anyway; an always one never). */
  readonly defer?: Iterable<string>;
  /** Toolsets whose presence does not matter (forbidden to the caller: never active for them either way). */
  readonly ignore?: Iterable<string>;
}

/** The query string (no `?`; empty when a bare URL gives it) that selects exactly `wanted`. */
export function shortestQuery(ctx: SpellContext, wanted: Wanted): string {
  const ignore = new Set(wanted.ignore ?? []);
  const on = new Set(wanted.on);
  const all = ctx.toolsets;
  const target = all.filter((t) => t.always || on.has(t.name)).map((t) => t.name);
  const targetSet = new Set(target);
  const deferWanted = new Set(wanted.defer ?? []);
  const deferred = all
    .filter((t) => targetSet.has(t.name) && (t.deferred || (!t.always && deferWanted.has(t.name))))
    .map((t) => t.name);
  const catalog: SelectionCatalog = { toolsets: all, toolset: new Set(all.map((t) => t.name)) };
  const options = {
    ...(ctx.defaultSelection !== undefined ? { defaultSelection: ctx.defaultSelection } : {}),
    ...(ctx.ignoreKeys ? { ignoreKeys: ctx.ignoreKeys } : {}),
  };
  const matters = (names: readonly string[]) => names.filter((n) => !ignore.has(n)).join(",");
  const fits = (query: string): boolean => {
    const r = select(catalog, query, options);
    return (
      r.ok &&
      r.selection.unknown.length === 0 &&
      matters(r.selection.active) === matters(target) &&
      matters(r.selection.deferred) === matters(deferred)
    );
  };
  const best = candidates(ctx, target, deferred, ignore).reduce<string | undefined>(
    (found, q) => ((found !== undefined && found.length <= q.length) || !fits(q) ? found : q),
    undefined,
  );
  // `only=` with `defer=` names every part of the selection: it always reads back as asked.
  return best ?? join(only(all, target, ignore), deferPart(all, deferred));
}

/** Spellings worth reading back, in order of preference among equals. */
function candidates(
  ctx: SpellContext,
  target: readonly string[],
  deferred: readonly string[],
  ignore: ReadonlySet<string>,
): string[] {
  const all = ctx.toolsets;
  const want = new Set(target);
  const defaults = new Set(all.filter((t) => t.default || t.always).map((t) => t.name));
  const add = all.filter((t) => want.has(t.name) && !defaults.has(t.name)).map((t) => t.name);
  const drop = all
    .filter((t) => t.default && !t.always && !want.has(t.name) && !ignore.has(t.name))
    .map((t) => t.name);
  const without = drop.length ? `without=${drop.join(",")}` : "";
  const selections = [
    "",
    join(...add, without),
    join(add.length ? `toolsets=${add.join(",")}` : "", without),
    // Names something (so a deployment's default selection does not apply) and changes nothing.
    "without=",
    only(all, target, ignore),
  ];
  const defers = ["", deferPart(all, deferred), deferred.length ? `defer=${DEFER_ALL}` : ""];
  return selections.flatMap((s) => defers.map((d) => join(s, d)));
}

function only(all: readonly SpellToolset[], target: readonly string[], ignore: ReadonlySet<string>): string {
  const want = new Set(target);
  return `only=${all
    .filter((t) => want.has(t.name) && !t.always && !ignore.has(t.name))
    .map((t) => t.name)
    .join(",")}`;
}

/** `defer=` for the deferred toolsets the config does not defer already (empty when there are none). */
function deferPart(all: readonly SpellToolset[], deferred: readonly string[]): string {
  const mine = new Set(deferred);
  const named = all.filter((t) => mine.has(t.name) && !t.deferred).map((t) => t.name);
  return named.length ? `defer=${named.join(",")}` : "";
}

function join(...parts: string[]): string {
  return parts.filter(Boolean).join("&");
}

/** `/mcp?notes`: the path and its query (no `?` when the query is empty). */
export function withQuery(path: string, query: string): string {
  return query ? `${path}?${query}` : path;
}
