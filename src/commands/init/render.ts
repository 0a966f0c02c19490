/** @module The packs.yaml text init writes: a header that explains it, the upstreams, and --live's toolsets. */
import { comment, scalar } from "./text.js";
import { renderToolsets } from "./toolsets.js";
import type { InitPlan, Listing, UpstreamPlan } from "./types.js";

export const SCHEMA_LINE =
  "# yaml-language-server: $schema=./node_modules/toolpacks/schema/packs.schema.json";

function mapBlock(key: string, map: Record<string, string> | undefined, indent: string): string[] {
  if (!map || !Object.keys(map).length) return [];
  return [
    `${indent}${key}:`,
    ...Object.entries(map).map(([k, v]) => `${indent}  ${scalar(k)}: ${scalar(v)}`),
  ];
}

function renderUpstream(u: UpstreamPlan): string[] {
  const s = u.spec;
  return [
    ...comment(u.notes, "  "),
    `  ${scalar(u.name)}:`,
    ...(s.url !== undefined ? [`    url: ${scalar(s.url)}`] : []),
    ...mapBlock("headers", s.headers, "    "),
    ...(s.command !== undefined ? [`    command: ${scalar(s.command)}`] : []),
    ...(s.args?.length ? [`    args: [${s.args.map((a) => JSON.stringify(a)).join(", ")}]`] : []),
    ...mapBlock("env", s.env, "    "),
    ...(s.cwd !== undefined ? [`    cwd: ${scalar(s.cwd)}`] : []),
  ];
}

/** One line per variable the file needs, with where it is used: in the header and on stderr. */
export function variableLines(plan: InitPlan): string[] {
  const vars = [...plan.variables.values()];
  if (!vars.length) return [];
  const w = Math.max(...vars.map((v) => v.name.length));
  const why = { secret: "value not copied", input: "a VS Code input", env: "from the environment" };
  return vars.map((v) => `  ${v.name.padEnd(w)}  ${v.where.join(", ")} (${why[v.kind]})`);
}

/** The packs.yaml text: upstreams, and with `live` one toolset per server that was listed. */
export function renderPacks(plan: InitPlan, live?: ReadonlyMap<string, Listing>): string {
  const names = plan.upstreams.map((u) => u.name);
  const head = [
    SCHEMA_LINE,
    "#",
    `# Made by \`toolpacks init\` from ${plan.source} ("${plan.key}"): ${names.length} server(s), each an upstream.`,
  ];
  if (live) {
    head.push(
      "#",
      "# Each toolset below is one server's tools as it listed them when this file was written, on by default.",
      '# Regroup them by subject: make toolsets such as "issues" or "docs", cut and paste member lines into',
      "# them, delete the per-server toolsets and the tools you do not want. An upstream that a toolset names",
      "# serves only the tools named; `default: false` makes a toolset opt-in (/mcp?name). A tool the server",
      "# adds later is not served until a toolset names it (a glob such as github/*_issue names many).",
    );
  } else {
    head.push(
      "#",
      "# No toolset names these upstreams yet, so each is served whole as a toolset of its own name, on by",
      `# default: /mcp gets every tool, /mcp?only=${names[0]} gets ${names[0]}'s alone. To group tools by`,
      "# subject, add toolsets, e.g.:",
      "#",
      "#   toolsets:",
      "#     issues:",
      "#       description: Read and triage issues.",
      "#       tools: [github/list_issues, github/*_issue]",
      "#",
      "# An upstream that a toolset names serves only the tools named. `toolpacks init --live` lists each",
      "# server's tools for you to regroup.",
    );
  }
  const vars = variableLines(plan);
  if (vars.length) {
    head.push(
      "#",
      "# Set these environment variables where `toolpacks serve` runs (secret values were not copied):",
      ...vars.map((l) => `#${l}`),
    );
  }
  for (const s of plan.skipped)
    head.push("#", `# Not carried over: ${JSON.stringify(s.original)}: ${s.reason}.`);
  head.push(
    "#",
    "# Check it with `npx toolpacks check FILE`; the format is in SPEC.md of the toolpacks package.",
  );
  const lines = [...head, "", "upstreams:", ...plan.upstreams.flatMap(renderUpstream)];
  if (live) lines.push(...renderToolsets(plan, live));
  return `${lines.map((l) => l.trimEnd()).join("\n")}\n`;
}
