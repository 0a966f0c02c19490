/** @module `toolpacks toolsets`: what a URL with a query would activate; with `--live`, what it costs. */
import type { Command } from "commander";
import { requiresText, withAccess } from "../access.js";
import { parsePrincipalJson } from "../auth/requirements.js";
import type { Catalog } from "../catalog/types.js";
import { offersToolsetsTool, ownToolDefs } from "../proxy/lists.js";
import type { Figure, ToolsetsReport } from "../report.js";
import { everythingSelection, listFigure, toolsetFigures, toolsetsReport } from "../report.js";
import { type Resolution, resolve, resolveWithRefresh } from "../resolve.js";
import { type Selection, select } from "../selection.js";
import { catalogOrExit, toolsetsToolOn } from "./common.js";
import { finish, withLive } from "./live.js";

export function toolsetsTable(catalog: Catalog, report: ToolsetsReport): string {
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
export interface LiveCost {
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
export function liveTable(catalog: Catalog, report: ToolsetsReport, live: LiveCost): string {
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
    lines.push(
      saved >= 0
        ? `saving: ${((100 * saved) / e.schema_bytes).toFixed(1)}% (≈${e.approx_tokens - s.approx_tokens} tokens a turn)`
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
    .action(
      async (
        files: string[],
        opts: { select: string; json?: boolean; live?: boolean; toolsetsTool: boolean; as?: string },
      ) => {
        const catalog = catalogOrExit(files);
        const selected = select(catalog, opts.select);
        if (!selected.ok) {
          process.stderr.write(`bad selection: ${selected.error}\n`);
          process.exit(2);
        }
        const selection =
          opts.as === undefined ? selected.selection : asPrincipal(catalog, selected.selection, opts.as);
        if (!opts.live) {
          const report = toolsetsReport(catalog, selection);
          process.stdout.write(
            opts.json ? `${JSON.stringify(report, null, 2)}\n` : `${toolsetsTable(catalog, report)}\n`,
          );
          return;
        }
        const toolsetsTool = toolsetsToolOn(opts.toolsetsTool);
        // What a session would list beyond its upstreams' tools (serve keeps captured values by default).
        const extra = (r: Resolution) => ownToolDefs(r, toolsetsTool && offersToolsetsTool(r), true);
        const { report, live } = await withLive(catalog, async ({ inventory, refresh }) => {
          const { resolution, inventory: fresh } = await resolveWithRefresh(
            catalog,
            selection,
            inventory,
            refresh,
          );
          const everything = resolve(catalog, everythingSelection(catalog), fresh);
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
        });
        const e = live.everythingTotal;
        await finish(
          opts.json
            ? `${JSON.stringify(
                {
                  ...report,
                  everything: {
                    tools: e.tools,
                    schema_bytes: e.schema_bytes,
                    approx_tokens: e.approx_tokens,
                  },
                },
                null,
                2,
              )}\n`
            : `${liveTable(catalog, report, live)}\n`,
          0,
        );
      },
    );
}
