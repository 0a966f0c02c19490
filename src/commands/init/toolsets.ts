/**
 * @module --live's toolsets: one per listed server, its tools and prompts renamed with `as:` where an earlier
 * server already exposes the name, and the list of those renames for the user.
 */
import { TOOL_NAME_RULE } from "../../catalog/names.js";
import { comment, firstLine, scalar } from "./text.js";
import type { InitPlan, Listing } from "./types.js";

type Item = { name: string; title?: string; description?: string };

/** One member line to write: the name as listed, and `as` when another server has it already. */
interface Row {
  readonly item: Item;
  readonly invalid?: boolean;
  readonly as?: string;
}

/** A tool or prompt that another server exposes under the same name, and the name it is written with. */
interface Renamed {
  readonly kind: "tool" | "prompt";
  /** The server whose item is renamed. */
  readonly server: string;
  readonly name: string;
  readonly as: string;
  /** The earlier server that keeps the name. */
  readonly first: string;
}

function rows(
  kind: Renamed["kind"],
  server: string,
  items: readonly Item[],
  exposed: Map<string, string>,
  renamed: Renamed[],
): Row[] {
  const out: Row[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    if (seen.has(item.name)) continue;
    seen.add(item.name);
    if (!TOOL_NAME_RULE.test(item.name)) {
      out.push({ item, invalid: true });
      continue;
    }
    const first = exposed.get(item.name);
    if (first === undefined) {
      exposed.set(item.name, server);
      out.push({ item });
      continue;
    }
    let as = `${server}_${item.name}`.slice(0, 128);
    for (let n = 2; exposed.has(as); n++)
      as = `${`${server}_${item.name}`.slice(0, 127 - String(n).length)}_${n}`;
    exposed.set(as, server);
    renamed.push({ kind, server, name: item.name, as, first });
    out.push({ item, as });
  }
  return out;
}

/** Every listed server's member rows, and the renames made so that no two exposed names are the same. */
function exposedNames(
  plan: InitPlan,
  live: ReadonlyMap<string, Listing>,
): { rows: Map<string, { tools: Row[]; prompts: Row[] }>; renamed: Renamed[] } {
  const tools = new Map<string, string>();
  const prompts = new Map<string, string>();
  const renamed: Renamed[] = [];
  const byServer = new Map<string, { tools: Row[]; prompts: Row[] }>();
  for (const u of plan.upstreams) {
    const l = live.get(u.name);
    if (!l?.ok) continue;
    byServer.set(u.name, {
      tools: rows("tool", u.name, l.tools, tools, renamed),
      prompts: rows("prompt", u.name, l.prompts, prompts, renamed),
    });
  }
  return { rows: byServer, renamed };
}

/** Member lines of one kind, aligned, each with its note. */
function lines(
  kind: Renamed["kind"],
  server: string,
  list: readonly Row[],
): { lines: string[]; count: number } {
  const text = list.map((r) => {
    const ref = `${server}/${r.item.name}`;
    if (r.invalid)
      return { text: `# - ${JSON.stringify(ref)}`, note: "not a valid MCP name: toolpacks cannot serve it" };
    if (r.as === undefined) return { text: `- ${scalar(ref)}`, note: firstLine(r.item) };
    return {
      text: `- { ${kind}: ${scalar(ref)}, as: ${scalar(r.as)} }`,
      note: `${firstLine(r.item)} (renamed: another server has ${r.item.name})`.trim(),
    };
  });
  const w = Math.max(0, ...text.map((r) => r.text.length));
  return {
    lines: text.map((r) => `      ${r.note ? `${r.text.padEnd(w)}   # ${r.note}` : r.text}`),
    count: list.filter((r) => !r.invalid).length,
  };
}

export function renderToolsets(plan: InitPlan, live: ReadonlyMap<string, Listing>): string[] {
  const body: string[] = [];
  const exposed = exposedNames(plan, live).rows;
  let any = false;
  for (const u of plan.upstreams) {
    const l = live.get(u.name);
    if (!l) continue;
    if (!l.ok) {
      body.push(
        ...comment(
          [
            `${u.name}: not reached while writing this file: ${l.reason}`,
            `Until a toolset names it, it is served whole as the toolset "${u.name}".`,
          ],
          "  ",
        ),
      );
      continue;
    }
    const r = exposed.get(u.name)!;
    const t = lines("tool", u.name, r.tools);
    const p = lines("prompt", u.name, r.prompts);
    if (!t.count && !p.count) {
      body.push(
        ...comment(
          [`${u.name}: lists no tools or prompts; until a toolset names it, it is served whole.`],
          "  ",
        ),
      );
      continue;
    }
    any = true;
    const counts = [`${l.tools.length} tool${l.tools.length === 1 ? "" : "s"}`];
    if (l.prompts.length) counts.push(`${l.prompts.length} prompt${l.prompts.length === 1 ? "" : "s"}`);
    body.push(`  # ${u.name}: ${counts.join(", ")}`, `  ${scalar(u.name)}:`);
    if (t.lines.length) body.push("    tools:", ...t.lines);
    else body.push("    tools: []");
    if (p.lines.length) body.push("    prompts:", ...p.lines);
    if (l.resources + l.templates > 0) {
      body.push(
        `    # ${l.resources} resource(s), ${l.templates} template(s). To serve them, uncomment (if the list can`,
        "    # become empty, the glob matches nothing and this toolset is not enabled):",
        `    # resources: [${u.name}/**]`,
      );
    }
  }
  if (!body.length) return [];
  return any ? ["", "toolsets:", ...body] : ["", ...body.map((l) => l.replace(/^ {2}/, ""))];
}

/**
 * What to tell the user about names two servers share: one line per pair of servers and kind with the
 * renamed names, and one about servers that were not listed (their names could not be compared).
 */
export function collisionLines(plan: InitPlan, live: ReadonlyMap<string, Listing>, file: string): string[] {
  const groups = new Map<string, Renamed[]>();
  for (const r of exposedNames(plan, live).renamed) {
    const key = `${r.kind}\u0000${r.first}\u0000${r.server}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const out: string[] = [];
  for (const list of groups.values()) {
    const { kind, first, server } = list[0]!;
    const shown = list.slice(0, 6).map((r) => `${r.name} as ${r.as}`);
    if (list.length > 6) shown.push("…");
    const n = `${list.length} ${kind}${list.length === 1 ? "" : "s"}`;
    out.push(
      `${server} and ${first} both offer ${n}: ${server}'s ${list.length === 1 ? "is" : "are"} renamed with "as:" (${shown.join(", ")}); edit those, or give upstream ${server} a "prefix:" instead`,
    );
  }
  const unlisted = plan.upstreams.filter((u) => !live.get(u.name)?.ok).map((u) => u.name);
  if (unlisted.length && plan.upstreams.length > 1)
    out.push(
      `the tool names of ${unlisted.join(", ")} were not compared with the others (not listed): \`toolpacks check --live ${file}\` reports names two servers share once they run`,
    );
  return out;
}
