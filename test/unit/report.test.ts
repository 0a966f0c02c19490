/** The /toolsets payload and its byte/token figures: pure, from literal catalogs and inventories. */
import { describe, expect, test } from "vitest";
import { EMPTY_OFFER, type ToolDef, type UpstreamState } from "../../src/catalog/inventory.js";
import { toolsetsToolDef } from "../../src/proxy/toolsets-tool.js";
import {
  everythingSelection,
  listFigure,
  type ToolsetEntry,
  toolsetFigures,
  toolsetsReport,
} from "../../src/report.js";
import { type Resolution, resolve } from "../../src/resolve.js";
import { type Selection, select } from "../../src/selection.js";
import { catalogOf, inventoryOf } from "../helpers/catalog.js";

const catalog = catalogOf(`
upstreams:
  mail: { command: mail-server }
  gh: { command: gh-server, prefix: gh_ }
  fs: { command: fs-server }
toolsets:
  mail:
    tools: [mail/send, mail/read]
  inbox:
    default: false
    tools: [mail/read, mail/search]
  issues:
    tools:
      - gh/list_issues
      - tool: gh/create_issue
        as: open_issue
        description: Open an issue in the current repository — «ünïcode» ≈ more bytes than characters.
  files:
    default: false
    tools: [fs/read_file]
`);

const inventory = inventoryOf({
  mail: ["send", "read", "search", "play_game"],
  gh: ["list_issues", "create_issue"],
  fs: ["read_file"],
});

const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v));
const def = (upstream: string, name: string): ToolDef => {
  const s = inventory.get(upstream) as Extract<UpstreamState, { status: "ready" }>;
  return s.tools.find((t) => t.name === name)!;
};

function selection(query: string): Selection {
  const s = select(catalog, query);
  if (!s.ok) throw new Error(s.error);
  return s.selection;
}
const everything = (inv = inventory): Resolution => resolve(catalog, everythingSelection(catalog), inv);
const entry = (entries: readonly ToolsetEntry[], name: string) => entries.find((t) => t.name === name)!;

describe("the offline report", () => {
  test("the offline toolsets --json has no byte fields it cannot know", () => {
    const report = toolsetsReport(catalog, selection("inbox"));
    expect(Object.keys(report)).toEqual(["toolsets", "active", "unknown"]);
    for (const t of report.toolsets)
      expect(Object.keys(t)).toEqual([
        "name",
        "title",
        "description",
        "default",
        "always",
        "active",
        "deferred",
      ]);
  });
});

describe("what a selection costs", () => {
  test("a toolset's bytes are counted from what the client sees, not the upstream's definition", () => {
    const r = resolve(catalog, selection(""), inventory);
    const issues = entry(toolsetsReport(catalog, selection(""), r).toolsets, "issues");
    const seen = [
      { ...def("gh", "list_issues"), name: "gh_list_issues" },
      {
        ...def("gh", "create_issue"),
        name: "open_issue",
        description: "Open an issue in the current repository — «ünïcode» ≈ more bytes than characters.",
      },
    ];
    expect(issues.schema_bytes).toBe(bytes(seen[0]) + bytes(seen[1]));
    expect(issues.schema_bytes).toBe(
      r.tools.filter((t) => t.upstream === "gh").reduce((n, t) => n + bytes(t.definition), 0),
    );
  });

  test("bytes are counted as UTF-8 bytes, not characters, so non-ASCII descriptions cost what they weigh", () => {
    const r = resolve(catalog, selection("only=issues"), inventory);
    const open = r.tool.get("open_issue")!.definition;
    const figure = toolsetFigures(catalog, r).get("issues")!;
    expect(JSON.stringify(open).length).toBeLessThan(Buffer.byteLength(JSON.stringify(open)));
    expect(figure.schema_bytes).toBe(
      Buffer.byteLength(JSON.stringify(open)) + bytes(r.tool.get("gh_list_issues")!.definition),
    );
  });

  test("a tool two active toolsets share is counted in each of them, and once in the total", () => {
    const r = resolve(catalog, selection("inbox"), inventory);
    const report = toolsetsReport(catalog, selection("inbox"), r);
    const read = bytes(r.tool.get("read")!.definition);
    expect(entry(report.toolsets, "mail").schema_bytes).toBe(bytes(def("mail", "send")) + read);
    expect(entry(report.toolsets, "inbox").schema_bytes).toBe(read + bytes(def("mail", "search")));
    // The top level counts it once, as tools/list lists it once.
    expect(report.schema_bytes).toBe(bytes({ tools: r.tools.map((t) => t.definition) }));
  });

  test("the total includes list_server_toolsets, which every session also gets", () => {
    const r = resolve(catalog, selection(""), inventory);
    const report = toolsetsReport(catalog, selection(""), r, [toolsetsToolDef]);
    expect(report.schema_bytes).toBe(
      bytes({ tools: [...r.tools.map((t) => t.definition), toolsetsToolDef] }),
    );
    expect(report.tools?.at(-1)).toBe("list_server_toolsets");
    expect(listFigure(r, [toolsetsToolDef]).tools).toBe(r.tools.length + 1);
  });

  test("≈tokens round up, so a 13-byte list is said to cost 4 tokens", () => {
    const r = resolve(catalog, selection(""), inventory);
    const report = toolsetsReport(catalog, selection(""), r);
    expect(report.approx_tokens).toBe(Math.ceil(report.schema_bytes! / 4));
    for (const t of report.toolsets)
      if (t.schema_bytes !== undefined) expect(t.approx_tokens).toBe(Math.ceil(t.schema_bytes / 4));
    const tiny = catalogOf(`
upstreams: { u: { command: x } }
toolsets: { t: { tools: [u/ab] } }
`);
    const inv = new Map<string, UpstreamState>([
      ["u", { status: "ready", ...EMPTY_OFFER, tools: [{ name: "ab" }] }],
    ]);
    const s = select(tiny, "");
    if (!s.ok) throw new Error(s.error);
    const figure = toolsetFigures(tiny, resolve(tiny, s.selection, inv)).get("t")!;
    expect(figure).toEqual({ tools: 1, schema_bytes: 13, approx_tokens: 4 }); // {"name":"ab"}
  });
});

describe("what turning a toolset on would cost", () => {
  test("a toolset the selection leaves out shows its figure when its upstream is known", () => {
    const r = resolve(catalog, selection(""), inventory);
    const report = toolsetsReport(catalog, selection(""), r, [], everything());
    const files = entry(report.toolsets, "files");
    expect(files.active).toBe(false);
    expect(files.schema_bytes).toBe(bytes(def("fs", "read_file")));
    expect(files.approx_tokens).toBe(Math.ceil(files.schema_bytes! / 4));
    // An active toolset keeps the figure of the selection's own resolution.
    expect(entry(report.toolsets, "mail").schema_bytes).toBe(
      toolsetFigures(catalog, r).get("mail")!.schema_bytes,
    );
  });

  test("a toolset whose upstream is down or never started gets no figure, not a made-up one", () => {
    const down = inventoryOf({ mail: ["send", "read", "search"], gh: "connection closed" });
    const r = resolve(catalog, selection(""), down);
    const report = toolsetsReport(catalog, selection(""), r, [], everything(down));
    expect(entry(report.toolsets, "issues")).not.toHaveProperty("schema_bytes");
    expect(entry(report.toolsets, "issues")).not.toHaveProperty("approx_tokens");
    expect(entry(report.toolsets, "files")).not.toHaveProperty("schema_bytes"); // fs never started
    expect(entry(report.toolsets, "inbox").schema_bytes).toBeGreaterThan(0);
  });

  test("a toolset missing a member gets no figure, and is unavailable naming what is missing", () => {
    const short = inventoryOf({
      mail: ["send", "read"],
      gh: ["list_issues", "create_issue"],
      fs: ["read_file"],
    });
    const report = toolsetsReport(
      catalog,
      selection("inbox"),
      resolve(catalog, selection("inbox"), short),
      [],
      everything(short),
    );
    expect(entry(report.toolsets, "inbox")).not.toHaveProperty("schema_bytes");
    expect(report.unavailable).toEqual([
      { name: "inbox", reason: "missing", missing: ["mail/search"], detail: "nothing matches mail/search" },
    ]);
  });

  test("everything on costs more than a selection of some of it", () => {
    const r = resolve(catalog, selection("only=mail"), inventory);
    const all = everything();
    expect(listFigure(r).schema_bytes).toBeLessThan(listFigure(all).schema_bytes);
    expect(listFigure(all).tools).toBe(all.tools.length);
    const figures = toolsetFigures(catalog, r, all);
    expect([...figures.keys()]).toEqual(["mail", "inbox", "issues", "files"]);
  });

  test("every toolset of a large catalog is figured without going through the query bounds", () => {
    const names = Array.from({ length: 300 }, (_, i) => `t${i}`);
    const big = catalogOf(`
upstreams: { u: { command: x } }
toolsets:
${names.map((n) => `  ${n}: { default: false, tools: [u/a] }`).join("\n")}
`);
    expect(select(big, `only=${names.join(",")}`).ok).toBe(false);
    const all = everythingSelection(big);
    expect(all.active).toEqual(names);
    expect(all.unknown).toEqual([]);
    const r = resolve(big, all, inventoryOf({ u: ["a"] }));
    expect(r.active).toHaveLength(300);
    expect(listFigure(r).tools).toBe(1);
  });
});
