/**
 * @module The console's picture of a selection (SPEC §17.3), from the report the core gave: a card per toolset, a
 * panel per upstream, and the costs beside "everything on" and "everything deferred". What a toolset the
 * selection leaves out would give is resolved from what its upstreams listed last (pure: it starts nothing).
 * A toolset the caller may not use is a card that says so and nothing more.
 */
import { requiresText } from "../access.js";
import type { Inventory, UpstreamState } from "../catalog/inventory.js";
import { memberMatches } from "../catalog/members.js";
import type { Catalog, Toolset } from "../catalog/types.js";
import { type Figure, listFigure, toolsetFigures } from "../report.js";
import { type Resolution, resolve } from "../resolve.js";
import { type Selection, selectionKey } from "../selection.js";
import type { ConsoleSource, InstanceView, ReportView } from "./source.js";
import type {
  ConsolePayload,
  Costs,
  Problem,
  ServerInfo,
  ToolLine,
  ToolsetCard,
  UpstreamPanel,
} from "./wire.js";

/** What the shared instances have listed: the inventory a toolset nobody selected is judged by. */
function knownInventory(instances: readonly InstanceView[]): Inventory {
  const known = new Map<string, UpstreamState>();
  for (const i of instances) if (i.kind === "shared" && i.state) known.set(i.upstream, i.state);
  return known;
}

function selectionOf(active: readonly string[], deferred: readonly string[] = []): Selection {
  return { active, unknown: [], deferred, key: selectionKey(active, deferred) };
}

export function consolePayload(
  source: ConsoleSource,
  view: ReportView,
  server: ServerInfo,
  query: string,
): ConsolePayload {
  const catalog = source.catalog;
  const denied = new Set(view.selection.denied ?? []);
  const known = knownInventory(view.instances);
  const toolsets = catalog.toolsets.map((t) => card(catalog, t, view, known, denied.has(t.name)));
  const scoped = denied.size > 0;
  return {
    server,
    query,
    selection: { active: view.selection.active, deferred: view.selection.deferred },
    report: view.report,
    toolsets,
    upstreams: upstreamPanels(catalog, view.instances, denied),
    costs: costsOf(source, view, known, denied),
    scoped,
  };
}

function toolLines(resolution: Resolution, toolset: string): ToolLine[] {
  return resolution.tools
    .filter((r) => r.toolsets.includes(toolset))
    .map((r) => {
      const d = r.definition as { title?: unknown; description?: unknown };
      return {
        name: r.name,
        ...(typeof d.title === "string" ? { title: d.title } : {}),
        ...(typeof d.description === "string" ? { description: d.description } : {}),
        upstream: r.upstream,
      };
    });
}

function problemOf(u: Resolution["unavailable"][number]): Problem {
  return { reason: u.reason, missing: u.missing, detail: u.detail, ...(u.url ? { url: u.url } : {}) };
}

function card(
  catalog: Catalog,
  t: Toolset,
  view: ReportView,
  known: Inventory,
  forbidden: boolean,
): ToolsetCard {
  const entry = view.report.toolsets.find((e) => e.name === t.name);
  const base = {
    name: t.name,
    title: t.title,
    description: t.description,
    default: t.default,
    always: t.always,
    deferred: t.deferred,
    implicit: t.implicit,
    ...(t.requires ? { requires: t.requires } : {}),
    ...(entry?.headers ? { headers: entry.headers } : {}),
  };
  if (forbidden) {
    const detail = t.requires ? requiresText(t.requires) : "";
    return {
      ...base,
      forbidden: true,
      state: "forbidden",
      problem: { reason: "forbidden", missing: [], detail },
      deferred_now: false,
      tools: null,
      cost: null,
    };
  }
  const active = view.resolution.active.includes(t.name);
  const refused = view.resolution.unavailable.find((u) => u.name === t.name);
  // Off in this selection: judged alone, by what its upstreams listed last (nothing is started for it).
  const listed = t.upstreams.every((u) => known.has(u));
  const alone = active || !listed ? undefined : resolve(catalog, selectionOf([t.name]), known);
  const from = active ? view.resolution : alone?.active.includes(t.name) ? alone : undefined;
  const figure = from && toolsetFigures(catalog, from).get(t.name);
  const why = refused ?? alone?.unavailable.find((u) => u.name === t.name);
  return {
    ...base,
    state: active ? "active" : refused ? refused.reason : "off",
    ...(why ? { problem: problemOf(why) } : {}),
    deferred_now: active && entry?.deferred === true,
    members: t.members.map((m) => m.ref),
    upstreams: t.upstreams,
    tools: from ? toolLines(from, t.name) : null,
    cost: figure
      ? { tools: figure.tools, schema_bytes: figure.schema_bytes, approx_tokens: figure.approx_tokens }
      : null,
  };
}

function upstreamPanels(
  catalog: Catalog,
  instances: readonly InstanceView[],
  denied: ReadonlySet<string>,
): UpstreamPanel[] {
  const everyone = denied.size === 0;
  const out: UpstreamPanel[] = [];
  for (const u of catalog.upstreams.values()) {
    const toolsets = catalog.toolsets
      .filter((t) => t.upstreams.includes(u.name) && !denied.has(t.name))
      .map((t) => t.name);
    if (!everyone && toolsets.length === 0) continue;
    const panel = upstreamStatus(u.name, u.transport, u.isolation, instances);
    const shared = instances.find((i) => i.upstream === u.name && i.kind === "shared")?.state;
    const unclaimed =
      everyone && u.covered && shared?.status === "ready"
        ? shared.tools
            .map((d) => d.name)
            .filter(
              (name) =>
                !catalog.toolsets.some((t) =>
                  t.members.some((m) => m.kind === "tool" && m.upstream === u.name && memberMatches(m, name)),
                ),
            )
        : undefined;
    out.push({ ...panel, ...(unclaimed?.length ? { unclaimed } : {}), toolsets });
  }
  return out;
}

/**
 * How an upstream is doing: its shared instance's state; one without a shared instance (per-session, or only per
 * credential) is ready when one of its instances is. idle: nothing runs (it costs nothing until it is needed).
 */
export function upstreamStatus(
  name: string,
  transport: "stdio" | "http",
  isolation: "shared" | "per-session",
  instances: readonly InstanceView[],
): Omit<UpstreamPanel, "unclaimed" | "toolsets"> {
  const mine = instances.filter((i) => i.upstream === name);
  const shared = mine.find((i) => i.kind === "shared");
  const pick =
    shared ??
    mine.find((i) => i.state?.status === "ready") ??
    mine.find((i) => !i.state) ??
    mine.find((i) => i.state);
  const state = pick?.state;
  return {
    name,
    transport,
    isolation,
    state: !pick ? "idle" : !state ? "starting" : state.status === "ready" ? "ready" : "failed",
    ...(state?.status === "unavailable" ? { reason: state.reason } : {}),
    ...(pick?.era ? { era: pick.era } : {}),
    tools: state?.status === "ready" ? state.tools.length : null,
    instances: {
      credential: mine.filter((i) => i.kind === "credential").length,
      session: mine.filter((i) => i.kind === "session").length,
    },
  };
}

function figureOf(f: Figure): Figure {
  return { tools: f.tools, schema_bytes: f.schema_bytes, approx_tokens: f.approx_tokens };
}

function costsOf(
  source: ConsoleSource,
  view: ReportView,
  known: Inventory,
  denied: ReadonlySet<string>,
): Costs {
  const catalog = source.catalog;
  const report = view.report;
  const allowed = catalog.toolsets.filter((t) => !denied.has(t.name));
  const names = allowed.map((t) => t.name);
  const every = resolve(catalog, selectionOf(names), known);
  const deferredNames = allowed.filter((t) => !t.always).map((t) => t.name);
  const allDeferred = resolve(catalog, selectionOf(names, deferredNames), known);
  return {
    selection: {
      tools: report.tools?.length ?? 0,
      schema_bytes: report.schema_bytes ?? 0,
      approx_tokens: report.approx_tokens ?? 0,
    },
    everything: figureOf(listFigure(every, source.extraTools(every), false)),
    deferred: figureOf(listFigure(allDeferred, source.extraTools(allDeferred))),
    unknown: allowed.filter((t) => t.upstreams.some((u) => !known.has(u))).map((t) => t.name),
  };
}
