/** @module `toolpacks toolsets`: what a URL with a query would activate; with `--live`, what it costs. */
import type { Command } from "commander";
import { requiresText, withAccess } from "../access.js";
import { parsePrincipalJson } from "../auth/requirements.js";
import type { Catalog } from "../catalog/types.js";
import { selectFor } from "../clients/select.js";
import type { Figure, ToolsetsReport } from "../report.js";
import { everythingSelection, listFigure, toolsetFigures, toolsetsReport } from "../report.js";
import { type Resolution, resolve } from "../resolve.js";
import type { Selection } from "../selection.js";
import { catalogOrExit, toolsetsToolOn } from "./common.js";
import { finish } from "./live.js";
import { clientProfile, servedResolution, sessionExtras } from "./served.js";
import { withInventory } from "./snapshot.js";

function toolsetsTable(catalog: Catalog, report: ToolsetsReport): string {
  const w = Math.max(4, ...report.toolsets.map((t) => t.name.length));
  const lines = [`${"name".padEnd(w)}  active  default  always  deferred  title`];
  const yes = (b: boolean, width: number) => (b ? "yes" : "-").padEnd(width);
  for (const t of report.toolsets) {
    lines.push(
      `${t.name.padEnd(w)}  ${yes(t.active, 6)}  ${yes(t.default, 7)}  ${yes(t.always, 6)}  ${yes(t.deferred, 8)}  ${t.title}`,
    );
  }
  lines.push("", `active: ${report.active.join(", ") || "(none)"}`);
  if (report.unknown.length)
    lines.push(
      `unknown: ${report.unknown.join(", ")} (served anyway; known: ${catalog.toolsets.map((t) => t.name).join(", ")})`,
    );
  if (report.tools) lines.push(`tools: ${report.tools.join(", ") || "(none)"}`);
  for (const t of report.toolsets)
    if (t.requires)
      lines.push(`${t.forbidden ? "forbidden" : "gated"}: ${t.name} ${requiresText(t.requires)}`);
  for (const u of report.unavailable ?? []) lines.push(`not enabled: ${u.name}: ${u.reason}: ${u.detail}`);
  return lines.join("\n");
}

/** The figures `toolsets --live` prints: the selection's and "everything on"'s resolutions with their totals. */
interface LiveCost {
  readonly resolution: Resolution;
  readonly everything: Resolution;
  readonly selectionTotal: Figure;
  readonly everythingTotal: Figure;
}

/** Why a toolset is not on, in a few words, and the detail (refs that match nothing, which upstream is down). */
function statusOf(name: string, live: LiveCost): { status: string; detail: string } {
  const requested =
    live.resolution.requested.includes(name) ||
    live.resolution.unavailable.some((u) => u.name === name && u.reason === "forbidden");
  if (requested && live.resolution.active.includes(name)) return { status: "active", detail: "" };
  const from = requested ? live.resolution : live.everything;
  const u = from.unavailable.find((x) => x.name === name);
  const why = u ? (u.reason === "missing" ? u.missing.join(", ") : u.detail) : "";
  if (requested) return { status: u?.reason ?? "active", detail: why };
  return { status: "not selected", detail: u ? `${u.reason}: ${why}` : "" };
}

const line = (label: string, f: Figure) =>
  `${label} ${f.tools} tools, ${f.schema_bytes} bytes, ≈${f.approx_tokens} tokens`;

/** Per toolset: status, tools, bytes and ≈tokens; then the selection against everything on, and the saving. */
function liveTable(catalog: Catalog, report: ToolsetsReport, live: LiveCost): string {
  const figures = toolsetFigures(catalog, live.resolution, live.everything);
  const deferred = new Set(report.toolsets.filter((t) => t.deferred).map((t) => t.name));
  const rows = catalog.toolsets.map((t) => {
    const f = figures.get(t.name);
    const { status, detail } = statusOf(t.name, live);
    return [
      t.name,
      status === "active" && deferred.has(t.name) ? "active, deferred" : status,
      f ? String(f.tools) : "-",
      f ? String(f.schema_bytes) : "-",
      f ? String(f.approx_tokens) : "-",
      detail,
    ];
  });
  const head = ["name", "status", "tools", "bytes", "≈tokens", ""];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: string[]) =>
    r
      .map((c, i) =>
        i >= 2 && i <= 4 ? c.padStart(widths[i]!) : i === r.length - 1 ? c : c.padEnd(widths[i]!),
      )
      .join("  ")
      .trimEnd();
  const lines = [fmt(head), ...rows.map(fmt), ""];
  if (report.unknown.length) lines.push(`unknown: ${report.unknown.join(", ")} (served anyway)`);
  const s = live.selectionTotal;
  const e = live.everythingTotal;
  lines.push(line("selection:    ", s));
  if (report.without_deferral) lines.push(line("no deferral:  ", report.without_deferral));
  lines.push(line("everything on:", e));
  if (e.schema_bytes > 0) {
    const saved = e.schema_bytes - s.schema_bytes;
    const listed = report.without_deferral;
    lines.push(
      saved >= 0
        ? `saving: ${((100 * saved) / e.schema_bytes).toFixed(1)}% (≈${e.approx_tokens - s.approx_tokens} tokens a turn)`
        : listed && s.schema_bytes > listed.schema_bytes
          ? // Deferring lists find_tools and call_tool in place of the deferred tools: here they are the bigger.
            `saving: none (find_tools and call_tool cost more than the deferral saves: ≈${s.approx_tokens - listed.approx_tokens} tokens a turn more than listing every tool)`
          : "saving: none (the selection lists more than everything on: a toolset it enables conflicts with another)",
    );
  }
  return lines.join("\n");
}

/** The selection as a principal with these claims may have it (`--as`); exit 2 on claims that are not JSON. */
function asPrincipal(catalog: Catalog, selection: Selection, claims: string): Selection {
  try {
    return withAccess(catalog, selection, parsePrincipalJson(claims));
  } catch (err) {
    process.stderr.write(`toolpacks toolsets: ${(err as Error).message}\n`);
    process.exit(2);
  }
}

export function registerToolsets(program: Command): void {
  program
    .command("toolsets")
    .description("show what a URL with a query would activate (with --live: connect and show what it costs)")
    .argument("<config...>", "packs.yaml files")
    .option("--select <query>", "the URL query, e.g. 'issues&without=docs' or 'only=docs'", "")
    .option(
      "--as <claims>",
      'answer for a principal with these token claims (JSON), e.g. \'{"scope":"notes:read","groups":["eng"]}\'',
    )
    .option("--json", "print the /toolsets payload as JSON")
    .option("--live", "connect to the upstreams: status, tools, bytes and ≈tokens per toolset and in total")
    .option(
      "--no-toolsets-tool",
      "with --live: count tools/list without list_server_toolsets (as serve --no-toolsets-tool)",
    )
    .option("--client <name>", "answer for a client that sends this clientInfo.name (its profile, SPEC §14)")
    .option("--client-version <version>", "with --client: the clientInfo.version it sends")
    .option(
      "--catalog <file>",
      "use a saved catalog (toolpacks eval --save-catalog) instead of the live upstreams",
    )
    .action(async (files: string[], opts: ToolsetsOptions) => {
      const catalog = catalogOrExit(files);
      const client = clientProfile(catalog, opts.client, opts.clientVersion);
      const selected = selectFor(catalog, opts.select, {}, client.profile);
      if (!selected.ok) {
        process.stderr.write(`bad selection: ${selected.error}\n`);
        process.exit(2);
      }
      const selection =
        opts.as === undefined ? selected.selection : asPrincipal(catalog, selected.selection, opts.as);
      const notes = client.note ? [client.note] : [];
      if (!opts.live && opts.catalog === undefined) {
        const report = toolsetsReport(catalog, selection);
        process.stdout.write(
          opts.json
            ? `${JSON.stringify(report, null, 2)}\n`
            : `${[toolsetsTable(catalog, report), ...profileLines(report, false), ...notes].join("\n")}\n`,
        );
        return;
      }
      const extra = sessionExtras(toolsetsToolOn(opts.toolsetsTool));
      const { report, live } = await withInventory(catalog, opts.catalog, async (inventory, refresh) => {
        const served = await servedResolution(catalog, selection, inventory, refresh, extra);
        const { resolution } = served;
        const everything = resolve(catalog, everythingSelection(catalog), served.inventory);
        const live: LiveCost = {
          resolution,
          everything,
          selectionTotal: listFigure(resolution, extra(resolution)),
          everythingTotal: listFigure(everything, extra(everything), false),
        };
        return {
          report: toolsetsReport(catalog, selection, resolution, extra(resolution), everything),
          live,
        };
      }).catch(exitOnBadCatalog);
      const e = live.everythingTotal;
      const everything = { tools: e.tools, schema_bytes: e.schema_bytes, approx_tokens: e.approx_tokens };
      await finish(
        opts.json
          ? `${JSON.stringify({ ...report, everything }, null, 2)}\n`
          : `${[liveTable(catalog, report, live), ...profileLines(report, true), ...notes].join("\n")}\n`,
        0,
      );
    });
}

interface ToolsetsOptions {
  select: string;
  json?: boolean;
  live?: boolean;
  toolsetsTool: boolean;
  as?: string;
  client?: string;
  clientVersion?: string;
  catalog?: string;
}

/** A saved catalog that cannot be read: what is wrong, and exit 2. */
export function exitOnBadCatalog(err: unknown): never {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(2);
}

/** The client profile's lines: which matched, its caps, what it deferred and why, what it cut, what is still over. */
function profileLines(report: ToolsetsReport, live: boolean): string[] {
  const p = report.client_profile;
  if (!p) return [];
  const caps = [
    ...(p.max_tools !== undefined ? [`max_tools ${p.max_tools}`] : []),
    ...(p.max_list_bytes !== undefined ? [`max_list_bytes ${p.max_list_bytes}`] : []),
    `defer ${p.defer}`,
    ...(p.max_description_bytes !== undefined ? [`max_description_bytes ${p.max_description_bytes}`] : []),
    ...(p.selection !== undefined ? [`selection ${p.selection}`] : []),
  ];
  const lines = [`client profile: ${p.client.join(", ")} (${p.from}): ${caps.join(", ")}`];
  if (p.source) lines.push(`  cap published by: ${p.source}`);
  if (!live) {
    lines.push("  what it defers to meet its caps needs the upstreams' lists: add --live or --catalog FILE");
    return lines;
  }
  const deferred = report.deferred_by_profile ?? [];
  if (deferred.length)
    lines.push(
      `deferred by profile: ${deferred.map((d) => d.name).join(", ")} (${deferred[0]!.reason}); found with find_tools`,
    );
  if (p.descriptions_cut) lines.push(`descriptions cut: ${p.descriptions_cut} (whole in find_tools)`);
  const over =
    p.defer === "none"
      ? "defer none: served as it is"
      : "even with every toolset it may defer deferred: served with them deferred";
  lines.push(p.over ? `over its caps: ${p.over} (${over})` : "within its caps");
  return lines;
}
