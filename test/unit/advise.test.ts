/** `toolpacks advise`, pure: use from the audit log and /metrics, the rules, edits that keep the file, the diff. */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { unifiedDiff } from "../../src/advise/diff.js";
import { applyEdits } from "../../src/advise/edit.js";
import { DEFAULT_THRESHOLDS, suggest } from "../../src/advise/suggest.js";
import { readMetrics, type Usage, usageFromAudit, usageFromMetrics } from "../../src/advise/usage.js";
import { catalogOf } from "../helpers/catalog.js";
import { tempDir } from "../helpers/proc.js";

const line = (session: string, selection: string, toolset: string) =>
  JSON.stringify({
    time: "2026-01-01T00:00:00Z",
    subject: null,
    selection,
    toolset,
    tool: "t",
    upstream: "u",
    outcome: "ok",
    duration_ms: 1,
    session,
  });

describe("use from the audit log", () => {
  const text = [
    line("s1", "a,b", "a"),
    line("s1", "a,b", "a"),
    line("s2", "a,b,c;defer=c", "c"),
    "not an audit line",
    line("s3", "a,b", "a"),
    "",
  ].join("\n");
  const usage = usageFromAudit("audit.jsonl", text);

  test("sessions that had each toolset, sessions that called it, and its calls", () => {
    expect(usage.sessions).toBe(3);
    expect(usage.calls).toBe(4);
    expect(usage.skipped).toBe(1);
    expect(Object.fromEntries(usage.byToolset)).toEqual({
      a: { sessions: 3, calledIn: 2, calls: 3 },
      b: { sessions: 3, calledIn: 0, calls: 0 },
      c: { sessions: 1, calledIn: 1, calls: 1 },
    });
  });

  test("each session's selection is kept, its deferred toolsets too", () => {
    expect(usage.selections).toContainEqual({ active: ["a", "b", "c"], deferred: ["c"] });
  });

  test("a line under no toolset (a built-in tool, an unknown name) counts its session, not a call, and is no stray line", () => {
    const builtIn = JSON.stringify({ ...JSON.parse(line("s4", "a", "a")), toolset: null, upstream: null });
    const more = usageFromAudit("audit.jsonl", `${text}\n${builtIn}\n`);
    expect(more).toMatchObject({ sessions: 4, calls: 4, skipped: 1 });
    expect(more.byToolset.get("a")).toEqual({ sessions: 4, calledIn: 2, calls: 3 });
  });
});

describe("use from /metrics", () => {
  const page = (a: number, b: number) => `# HELP toolpacks_calls_total Forwarded tool calls
toolpacks_calls_total{toolset="a",tool="x",upstream="u",outcome="ok"} ${a}
toolpacks_calls_total{toolset="a",tool="y",upstream="u",outcome="error"} 1
toolpacks_calls_total{toolset="b",tool="z",upstream="u",outcome="ok"} ${b}
toolpacks_sessions{selection="a,b"} 2
toolpacks_sessions{selection="other"} 7
toolpacks_sessions{selection="a"} 0
`;
  test("one reading: totals since start; open sessions per selection, `other` naming no toolset", () => {
    const u = usageFromMetrics("http://x/metrics", readMetrics(page(5, 0)));
    expect(Object.fromEntries(u.byToolset)).toEqual({
      a: { sessions: 2, calls: 6 },
      b: { sessions: 2, calls: 0 },
    });
    expect(u.sessions).toBe(2);
  });

  test("two readings: what happened between them", () => {
    const u = usageFromMetrics("http://x/metrics", readMetrics(page(9, 4)), readMetrics(page(5, 0)));
    expect(u.byToolset.get("a")?.calls).toBe(4);
    expect(u.byToolset.get("b")?.calls).toBe(4);
    expect(u.from).toMatch(/between two readings/);
  });
});

describe("the rules", () => {
  const catalog = catalogOf(`
upstreams: { u: { command: u } }
toolsets:
  used: { tools: [u/a] }
  idle: { tools: [u/b] }
  named: { default: false, tools: [u/c] }
  big: { tools: [u/d] }
  small: { tools: [u/e] }
  core: { always: true, tools: [u/f] }
  far: { default: false, tools: [u/g] }
  lazy: { deferred: true, tools: [u/h] }
`);
  const usage: Usage = {
    from: "test",
    sessions: 10,
    calls: 0,
    selections: [],
    byToolset: new Map([
      ["used", { sessions: 10, calledIn: 8, calls: 40 }],
      ["idle", { sessions: 10, calledIn: 0, calls: 0 }],
      ["named", { sessions: 3, calledIn: 0, calls: 0 }],
      ["big", { sessions: 10, calledIn: 1, calls: 1 }],
      ["small", { sessions: 10, calledIn: 1, calls: 2 }],
      ["core", { sessions: 10, calledIn: 0, calls: 0 }],
      ["lazy", { sessions: 10, calledIn: 0, calls: 0 }],
    ]),
  };
  const tokens = new Map([
    ["used", 2000],
    ["idle", 300],
    ["named", 100],
    ["big", 5000],
    ["small", 200],
    ["core", 50],
    ["far", 900],
    ["lazy", 4000],
  ]);
  const rows = Object.fromEntries(
    suggest(catalog, tokens, usage, DEFAULT_THRESHOLDS).map((r) => [r.toolset, r]),
  );

  test.each([
    ["used", undefined, /^keep: called in most/],
    ["idle", { key: "default", value: false }, /never called/],
    ["named", { key: "deferred", value: true }, /never called/],
    ["big", { key: "deferred", value: true }, /≈5000 tokens a turn, called in 10%/],
    ["small", undefined, /^keep: used now and then/],
    ["core", { key: "deferred", value: true }, /never called/],
    ["far", undefined, /^keep: no session had it/],
    ["lazy", undefined, /^keep: already deferred/],
  ])("%s → %j", (name, edit, why) => {
    const row = rows[name]!;
    expect(row.edit ? { key: row.edit.key, value: row.edit.value } : undefined).toEqual(edit);
    expect(row.suggestion).toMatch(why);
  });

  test("calls per 1,000 ≈tokens of per-turn cost", () => {
    expect(rows.used?.callsPerKiloToken).toBe(20);
    expect(rows.far?.callsPerKiloToken).toBe(0);
  });
});

const FILE = `# yaml-language-server: $schema=./schema/packs.schema.json
name: demo   # shown to clients

upstreams:
  u: { command: u, args: ["x"] }   # flow, as written

toolsets:
  # what people use every day
  used:
    title: Used
    tools: [u/a]

  idle:
    description: >-
      Folded text that must
      stay folded.
    # the members
    tools:
      - u/b   # one tool

  flow: { tools: [u/c] }
  told:
    default: true
    tools: [u/d]
`;

describe("edits keep the file", () => {
  test("a new key goes above the member list (and the comments on it); nothing else changes", () => {
    const r = applyEdits(FILE, [{ toolset: "idle", key: "default", value: false }]);
    expect(r.skipped).toEqual([]);
    expect(r.text).toBe(FILE.replace("    # the members\n", "    default: false\n    # the members\n"));
  });

  test("an existing value is replaced where it is; a flow mapping gets the key inside its braces", () => {
    const r = applyEdits(FILE, [
      { toolset: "told", key: "default", value: false },
      { toolset: "flow", key: "deferred", value: true },
    ]);
    expect(r.text).toBe(
      FILE.replace("    default: true\n", "    default: false\n").replace(
        "flow: { tools: [u/c] }",
        "flow: { deferred: true, tools: [u/c] }",
      ),
    );
  });

  test("a toolset this file does not declare as a mapping is skipped, and says why", () => {
    const r = applyEdits(FILE, [{ toolset: "missing", key: "deferred", value: true }]);
    expect(r.text).toBe(FILE);
    expect(r.skipped[0]?.why).toMatch(/not a mapping in this file/);
  });

  test("the diff applies with patch(1) and gives the edited file", () => {
    const tmp = tempDir();
    try {
      const after = applyEdits(FILE, [
        { toolset: "used", key: "deferred", value: true },
        { toolset: "told", key: "default", value: false },
      ]).text;
      const diff = unifiedDiff("packs.yaml", FILE, after);
      expect(diff).toMatch(/^--- a\/packs\.yaml\n\+\+\+ b\/packs\.yaml\n@@ -8,6 \+8,7 @@\n/);
      writeFileSync(`${tmp.dir}/packs.yaml`, FILE);
      execFileSync("patch", ["-p1", "-s", "-d", tmp.dir], { input: diff });
      expect(readFileSync(`${tmp.dir}/packs.yaml`, "utf8")).toBe(after);
    } finally {
      tmp.cleanup();
    }
  });

  test("the diff of texts far apart in a long file has one hunk per change, and patch applies it", () => {
    const before = Array.from({ length: 3000 }, (_, i) => `line ${i}`)
      .join("\n")
      .concat("\n");
    const after = before
      .replace("line 10\n", "line 10\nnew\n")
      .replace("line 2990\n", "")
      .replace("line 1500", "x");
    const diff = unifiedDiff("f", before, after);
    expect(diff.match(/^@@/gm)).toHaveLength(3);
    const tmp = tempDir();
    try {
      writeFileSync(`${tmp.dir}/f`, before);
      execFileSync("patch", ["-p1", "-s", "-d", tmp.dir], { input: diff });
      expect(readFileSync(`${tmp.dir}/f`, "utf8")).toBe(after);
    } finally {
      tmp.cleanup();
    }
  });

  test("equal texts have no diff", () => {
    expect(unifiedDiff("f", FILE, FILE)).toBe("");
  });
});
