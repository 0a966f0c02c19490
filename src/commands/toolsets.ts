/** @module `toolpacks toolsets`: what a URL with a query would activate, without connecting to anything. */
import type { Command } from "commander";
import type { Catalog } from "../catalog/types.js";
import type { ToolsetsReport } from "../report.js";
import { toolsetsReport } from "../report.js";
import { select } from "../selection.js";
import { catalogOrExit } from "./common.js";

export function toolsetsTable(catalog: Catalog, report: ToolsetsReport): string {
  const w = Math.max(4, ...report.toolsets.map((t) => t.name.length));
  const lines = [`${"name".padEnd(w)}  active  default  always  title`];
  for (const t of report.toolsets) {
    lines.push(
      `${t.name.padEnd(w)}  ${(t.active ? "yes" : "-").padEnd(6)}  ${(t.default ? "yes" : "-").padEnd(7)}  ${(t.always ? "yes" : "-").padEnd(6)}  ${t.title}`,
    );
  }
  lines.push("", `active: ${report.active.join(", ") || "(none)"}`);
  if (report.unknown.length)
    lines.push(
      `unknown: ${report.unknown.join(", ")} (served anyway; known: ${catalog.toolsets.map((t) => t.name).join(", ")})`,
    );
  if (report.tools) lines.push(`tools: ${report.tools.join(", ") || "(none)"}`);
  for (const u of report.unavailable ?? []) lines.push(`not enabled: ${u.name}: ${u.reason}: ${u.detail}`);
  return lines.join("\n");
}

export function registerToolsets(program: Command): void {
  program
    .command("toolsets")
    .description("show what a URL with a query would activate, without connecting to anything")
    .argument("<config...>", "packs.yaml files")
    .option("--select <query>", "the URL query, e.g. 'issues&without=docs' or 'only=docs'", "")
    .option("--json", "print the /toolsets payload as JSON")
    .action((files: string[], opts: { select: string; json?: boolean }) => {
      const catalog = catalogOrExit(files);
      const selected = select(catalog, opts.select);
      if (!selected.ok) {
        process.stderr.write(`bad selection: ${selected.error}\n`);
        process.exit(2);
      }
      const report = toolsetsReport(catalog, selected.selection);
      process.stdout.write(
        opts.json ? `${JSON.stringify(report, null, 2)}\n` : `${toolsetsTable(catalog, report)}\n`,
      );
    });
}
