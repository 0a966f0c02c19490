/** @module The one `/toolsets` payload: used by the HTTP route, the list_server_toolsets tool and `toolpacks toolsets --json`. */
import { requiresText } from "./access.js";
import type { Requires } from "./auth/types.js";
import type { ToolDef, UpstreamState } from "./catalog/inventory.js";
import type { Catalog } from "./catalog/types.js";
import { type ProfileFields, profileFields } from "./clients/report.js";
import { type Reason, type Resolution, resolve } from "./resolve.js";
import {
  deferredSet,
  listedRoutes,
  type ShadowedTool,
  searchToolDefs,
  shadowedSearchTools,
} from "./search/deferred.js";
import type { Selection } from "./selection.js";

/** What a list of tool definitions costs a client on every turn. */
interface Cost {
  /** UTF-8 bytes of the JSON the client is sent. */
  readonly schema_bytes: number;
  /** `ceil(schema_bytes / 4)`: a rough token count. */
  readonly approx_tokens: number;
}

/** A cost with the number of tools it covers. */
export interface Figure extends Cost {
  readonly tools: number;
}

export interface ToolsetEntry {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly default: boolean;
  readonly always: boolean;
  readonly active: boolean;
  /**
   * Its tools are found with find_tools instead of listed: in this resolution when it is active, else as the
   * config and the URL would have it (automatic deferral is only known for an active toolset).
   */
  readonly deferred: boolean;
  /** Request headers its upstreams take credentials from (`forward_headers`, `header_env`); only when any. */
  readonly headers?: readonly string[];
  /** Who may use it (`requires:`); only on gated toolsets. */
  readonly requires?: Requires;
  /** The caller does not meet `requires`: it is never active for them. Only when true. */
  readonly forbidden?: true;
  /** Bytes of the definitions of the tools it exposes; only with live data, and only when known. */
  readonly schema_bytes?: number;
  readonly approx_tokens?: number;
}

export interface ToolsetsReport extends ProfileFields {
  readonly toolsets: readonly ToolsetEntry[];
  readonly active: readonly string[];
  /** Exposed tool names; present once upstreams were asked. */
  readonly tools?: readonly string[];
  readonly unknown: readonly string[];
  /** Requested toolsets that are not enabled, and why; present once upstreams were asked. */
  readonly unavailable?: readonly {
    name: string;
    reason: Reason;
    missing: readonly string[];
    detail: string;
    /** `authorization_required`: the page where the caller authorizes the upstream (for this caller only). */
    url?: string;
    /** With reason `forbidden`: what the toolset needs. */
    requires?: Requires;
  }[];
  /** Bytes of the whole `tools/list` result the selection gets; present once upstreams were asked. */
  readonly schema_bytes?: number;
  readonly approx_tokens?: number;
  /** When toolsets are deferred: what `tools/list` would be with every active tool listed instead. */
  readonly without_deferral?: Figure;
  /** Listed upstream tools that take find_tools' or call_tool's name (ours is then not offered); only when any. */
  readonly shadowed?: readonly ShadowedTool[];
}

/** A tool the server lists besides the resolution's (list_server_toolsets): a name, or its definition (counted in the bytes). */
export type ExtraTool = string | ToolDef;

export const HOW_TO_SELECT =
  "Reconnect with the toolset in the URL: ?name adds it to the defaults, ?only=a,b asks for exactly those, ?without=name leaves one out, ?defer=all (or defer=a,b) keeps their tools out of the list, found with find_tools and run with call_tool.";

/** What a JSON value costs a client: its UTF-8 bytes as sent, and ≈tokens (bytes / 4, rounded up). */
function costOf(value: unknown): Cost {
  const schema_bytes = Buffer.byteLength(JSON.stringify(value));
  return { schema_bytes, approx_tokens: Math.ceil(schema_bytes / 4) };
}

/**
 * The whole `tools/list` result a resolution gives, with the extra tools the server appends: deferred tools
 * left out and find_tools/call_tool in (or, with `deferral: false`, every active tool listed).
 */
export function listFigure(
  resolution: Resolution,
  extraTools: readonly ExtraTool[] = [],
  deferral = true,
): Figure {
  const defs: unknown[] = (deferral ? listedRoutes(resolution) : resolution.tools).map((r) => r.definition);
  if (deferral) defs.push(...searchToolDefs(resolution));
  const counted = defs.length + extraTools.length;
  for (const t of extraTools) if (typeof t !== "string") defs.push(t);
  return { tools: counted, ...costOf({ tools: defs }) };
}

/**
 * Each toolset's own figure: the tools it exposes in `resolution` (a tool two toolsets share counts in
 * each), or, for a toolset not active there, in `everything` (every toolset requested). A toolset active in
 * neither (its upstreams unknown or down, a member missing, a conflict) has no figure.
 */
export function toolsetFigures(
  catalog: Catalog,
  resolution: Resolution,
  everything?: Resolution,
): Map<string, Figure> {
  const sums = new Map<string, { tools: number; bytes: number }>();
  for (const r of everything ? [resolution, everything] : [resolution]) {
    const mine = new Set(r.active.filter((n) => !sums.has(n)));
    for (const n of mine) sums.set(n, { tools: 0, bytes: 0 });
    for (const route of r.tools) {
      let bytes: number | undefined;
      for (const n of route.toolsets) {
        if (!mine.has(n)) continue;
        bytes ??= Buffer.byteLength(JSON.stringify(route.definition));
        const sum = sums.get(n)!;
        sum.tools++;
        sum.bytes += bytes;
      }
    }
  }
  const out = new Map<string, Figure>();
  for (const t of catalog.toolsets) {
    const sum = sums.get(t.name);
    if (sum)
      out.set(t.name, { tools: sum.tools, schema_bytes: sum.bytes, approx_tokens: Math.ceil(sum.bytes / 4) });
  }
  return out;
}

/**
 * Every toolset requested: resolved against the known inventory it gives each toolset's figure and the
 * "everything on" total. Built directly (not from `only=<all names>`, which a large catalog would take
 * over the query bounds).
 */
export function everythingSelection(catalog: Catalog): Selection {
  const active = Object.freeze(catalog.toolsets.map((t) => t.name));
  return Object.freeze({
    active,
    unknown: Object.freeze([]),
    deferred: Object.freeze([]),
    key: active.join(","),
  });
}

/**
 * Without a resolution the report says what the selection requests (no upstream asked); with one, `active`
 * is what is really enabled, `tools`/`unavailable` say the rest, and the byte figures are added: the whole
 * `tools/list` at the top level, and each toolset's own (from `everything`, a resolution of every toolset,
 * for toolsets not active in this one; omitted when unknown). `extraTools` are appended to `tools`; those
 * given as definitions count in the top-level bytes.
 */
export function toolsetsReport(
  catalog: Catalog,
  selection: Selection,
  resolution?: Resolution,
  extraTools: readonly ExtraTool[] = [],
  everything?: Resolution,
): ToolsetsReport {
  const active = resolution ? resolution.active : selection.active;
  const on = new Set(active);
  const figures = resolution ? toolsetFigures(catalog, resolution, everything) : new Map<string, Figure>();
  const total = resolution ? listFigure(resolution, extraTools) : undefined;
  const full = resolution?.deferred.length ? listFigure(resolution, extraTools, false) : undefined;
  const deferred = resolution ? deferredSet(resolution) : new Set(selection.deferred);
  const shadowed = resolution ? shadowedSearchTools(resolution) : [];
  return {
    toolsets: catalog.toolsets.map((t) => {
      const headers = [
        ...new Set(
          t.upstreams.flatMap((u) => {
            const spec = catalog.upstreams.get(u);
            return spec ? [...spec.forwardHeaders, ...Object.keys(spec.headerEnv)] : [];
          }),
        ),
      ];
      const denied = selection.denied?.includes(t.name) === true;
      // A forbidden toolset's size says nothing the caller may use.
      const figure = denied ? undefined : figures.get(t.name);
      return {
        name: t.name,
        title: t.title,
        description: t.description,
        default: t.default,
        always: t.always,
        active: on.has(t.name),
        deferred: on.has(t.name) ? deferred.has(t.name) : t.deferred,
        ...(headers.length ? { headers } : {}),
        ...(t.requires ? { requires: t.requires } : {}),
        ...(denied ? { forbidden: true as const } : {}),
        ...(figure ? { schema_bytes: figure.schema_bytes, approx_tokens: figure.approx_tokens } : {}),
      };
    }),
    active,
    ...(resolution
      ? {
          tools: [
            ...listedRoutes(resolution).map((r) => r.name),
            ...searchToolDefs(resolution).map((d) => d.name),
            ...extraTools.map((t) => (typeof t === "string" ? t : t.name)),
          ],
        }
      : {}),
    unknown: selection.unknown,
    ...(resolution || selection.forbidden?.length
      ? { unavailable: unavailableOf(catalog, selection, resolution) }
      : {}),
    ...(total ? { schema_bytes: total.schema_bytes, approx_tokens: total.approx_tokens } : {}),
    ...(full ? { without_deferral: full } : {}),
    ...(shadowed.length ? { shadowed } : {}),
    ...profileFields(selection, resolution, total),
  };
}

/** Why requested toolsets are off; without a resolution (no upstream asked), only those forbidden to the caller. */
function unavailableOf(
  catalog: Catalog,
  selection: Selection,
  resolution: Resolution | undefined,
): NonNullable<ToolsetsReport["unavailable"]> {
  const list =
    resolution?.unavailable ??
    (selection.forbidden ?? []).map((name) => {
      const requires = catalog.toolset.get(name)?.requires;
      return {
        name,
        reason: "forbidden" as const,
        missing: [],
        detail: requires ? requiresText(requires) : "",
      };
    });
  return list.map((u) => {
    const requires = u.reason === "forbidden" ? catalog.toolset.get(u.name)?.requires : undefined;
    return {
      name: u.name,
      reason: u.reason,
      missing: u.missing,
      detail: u.detail,
      ...("url" in u && u.url ? { url: u.url } : {}),
      ...(requires ? { requires } : {}),
    };
  });
}

/**
 * Every toolset resolved against what the shared instances of upstreams have listed already: the figures of
 * the toolsets a selection leaves out. Pure; starts nothing.
 */
export function resolveEverything(
  catalog: Catalog,
  instances: readonly {
    readonly ref: { readonly kind: string; readonly upstream: string };
    readonly state: UpstreamState | undefined;
  }[],
): Resolution {
  const known = new Map<string, UpstreamState>();
  for (const i of instances) if (i.state && i.ref.kind === "shared") known.set(i.ref.upstream, i.state);
  return resolve(catalog, everythingSelection(catalog), known);
}
