/** @module The packs.yaml text init writes: a header that explains it, the upstreams, and --live's toolsets. */
import { schemaLine } from "./schema.js";
import { STANDARD_VARIABLES } from "./secrets.js";
import { comment, scalar } from "./text.js";
import { renderToolsets } from "./toolsets.js";
import type { InitPlan, Listing, UpstreamPlan } from "./types.js";

/** The schema line when no output folder is known: the project's installed toolpacks. */
export const SCHEMA_LINE = schemaLine("./node_modules/toolpacks/schema/packs.schema.json");

export interface RenderOptions {
  /** What `$schema=` points to (see schemaRef); default: ./node_modules/toolpacks/schema/packs.schema.json. */
  readonly schema?: string;
  /** The environment init runs in: references to variables set there are not listed as ones to set. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

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

/**
 * One line per variable to set, with where it is used: in the header and on stderr. Secrets and VS Code inputs
 * always; references the client file made to the environment only when unset in `env` and not standard
 * (`HOME`, `PATH`, …): they stay references in the file either way.
 */
export function variableLines(plan: InitPlan, env: RenderOptions["env"] = {}): string[] {
  const vars = [...plan.variables.values()].filter(
    (v) => v.kind !== "env" || (!STANDARD_VARIABLES.has(v.name) && !env[v.name]),
  );
  if (!vars.length) return [];
  const w = Math.max(...vars.map((v) => v.name.length));
  const why = { secret: "value not copied", input: "a VS Code input", env: "from the environment" };
  return vars.map((v) => `  ${v.name.padEnd(w)}  ${v.where.join(", ")} (${why[v.kind]})`);
}

/** The packs.yaml text: upstreams, and with `live` one toolset per server that was listed. */
export function renderPacks(
  plan: InitPlan,
  live?: ReadonlyMap<string, Listing>,
  options: RenderOptions = {},
): string {
  const names = plan.upstreams.map((u) => u.name);
  const head = [
    options.schema ? schemaLine(options.schema) : SCHEMA_LINE,
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
    if (names.length > 1)
      head.push(
        "#",
        "# Two servers offering the same tool name conflict: the later one's toolset is then not served at",
        "# all. Only a live listing shows such names: `toolpacks check --live FILE` reports them. Fix one",
        "# with `prefix:` on its upstream (e.g. prefix: gh_) or with `as:` on a toolset member.",
      );
  }
  const vars = variableLines(plan, options.env);
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
    "# Check it with `toolpacks check FILE`; the format is in SPEC.md of the toolpacks package.",
  );
  const lines = [...head, "", "upstreams:", ...plan.upstreams.flatMap(renderUpstream)];
  if (live) lines.push(...renderToolsets(plan, live));
  return `${lines.map((l) => l.trimEnd()).join("\n")}\n`;
}
