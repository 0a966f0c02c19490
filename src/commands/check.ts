/** @module `toolpacks check`: a one-screen summary of a valid config. */
import type { Command } from "commander";
import type { Catalog, Upstream } from "../catalog/types.js";
import { catalogOrExit } from "./common.js";

function describeUpstream(u: Upstream): string {
  const d = u.display;
  if (u.transport === "http") return `http   ${d.url ?? ""}`;
  return `stdio  ${[d.command ?? "", ...(d.args ?? [])].join(" ")}`;
}

export function checkSummary(catalog: Catalog, files: readonly string[]): string {
  const lines: string[] = [];
  const ups = [...catalog.upstreams.values()];
  lines.push(`ok: ${files.join(", ")}: ${ups.length} upstream(s), ${catalog.toolsets.length} toolset(s)`);
  lines.push("", "upstreams:");
  const w = Math.max(4, ...ups.map((u) => u.name.length));
  for (const u of ups)
    lines.push(`  ${u.name.padEnd(w)}  ${describeUpstream(u)}${u.prefix ? `  (prefix ${u.prefix})` : ""}`);
  lines.push("", "toolsets:");
  const tw = Math.max(4, ...catalog.toolsets.map((t) => t.name.length));
  for (const t of catalog.toolsets) {
    const flags = [
      t.default ? "default" : "opt-in",
      ...(t.always ? ["always"] : []),
      ...(t.implicit ? ["implicit"] : []),
    ];
    const members = t.members.map((m) => (m.as ? `${m.ref} as ${m.as}` : m.ref));
    lines.push(`  ${t.name.padEnd(tw)}  ${flags.join(", ").padEnd(24)}  ${members.join(", ")}`);
  }
  return lines.join("\n");
}

export function registerCheck(program: Command): void {
  program
    .command("check")
    .description("validate config files and print a summary (exit 1 with every error)")
    .argument("<config...>", "packs.yaml files; toolsets of the same name merge")
    .action((files: string[]) => {
      const catalog = catalogOrExit(files);
      process.stdout.write(`${checkSummary(catalog, files)}\n`);
    });
}
