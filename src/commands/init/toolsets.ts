/** @module --live's toolsets: one per listed server, its members renamed where another server has the name. */
import { TOOL_NAME_RULE } from "../../catalog/names.js";
import { comment, firstLine, scalar } from "./text.js";
import type { InitPlan, Listing } from "./types.js";

/** Members of one server's toolset, renamed with `as:` where an earlier server already exposes the name. */
function members(
  server: string,
  items: readonly { name: string; title?: string; description?: string }[],
  exposed: Set<string>,
): { lines: string[]; count: number } {
  const rows: { text: string; note: string }[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    if (seen.has(item.name)) continue;
    seen.add(item.name);
    const ref = `${server}/${item.name}`;
    if (!TOOL_NAME_RULE.test(item.name)) {
      rows.push({
        text: `# - ${JSON.stringify(ref)}`,
        note: "not a valid MCP name: toolpacks cannot serve it",
      });
      continue;
    }
    if (!exposed.has(item.name)) {
      exposed.add(item.name);
      rows.push({ text: `- ${scalar(ref)}`, note: firstLine(item) });
      continue;
    }
    let as = `${server}_${item.name}`.slice(0, 128);
    for (let n = 2; exposed.has(as); n++)
      as = `${`${server}_${item.name}`.slice(0, 127 - String(n).length)}_${n}`;
    exposed.add(as);
    rows.push({
      text: `- { tool: ${scalar(ref)}, as: ${scalar(as)} }`,
      note: `${firstLine(item)} (renamed: another server has ${item.name})`.trim(),
    });
  }
  const w = Math.max(0, ...rows.map((r) => r.text.length));
  return {
    lines: rows.map((r) => `      ${r.note ? `${r.text.padEnd(w)}   # ${r.note}` : r.text}`),
    count: rows.filter((r) => !r.text.startsWith("#")).length,
  };
}

export function renderToolsets(plan: InitPlan, live: ReadonlyMap<string, Listing>): string[] {
  const body: string[] = [];
  const tools = new Set<string>();
  const prompts = new Set<string>();
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
    const t = members(u.name, l.tools, tools);
    const p = members(u.name, l.prompts, prompts);
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
