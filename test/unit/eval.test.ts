/** `toolpacks eval`, pure: the tasks file, the figures, what is checked before searching, the draft. */
import { describe, expect, test } from "vitest";
import { type EvalReport, evalText } from "../../src/eval/format.js";
import { evaluateTasks, searchedTools, wholeCatalog } from "../../src/eval/run.js";
import { RANK_DEPTH, rankOf, scoreTasks } from "../../src/eval/score.js";
import { draftTasks, readTasks, type Task } from "../../src/eval/tasks.js";
import { resolve } from "../../src/resolve.js";
import { select } from "../../src/selection.js";
import { catalogOf, inventoryOf } from "../helpers/catalog.js";

const task = (query: string, expect: string[], toolset?: string): Task => ({
  query,
  expect,
  ...(toolset ? { toolset } : {}),
  where: `t.yaml:${query.length}:1`,
});

describe("the tasks file", () => {
  test("YAML: a list of tasks, expect as a list or one name, each task's position kept", () => {
    const r = readTasks(
      "t.yaml",
      "- query: add two numbers\n  expect: [get-sum]\n- query: read a file\n  expect: read_text_file\n  toolset: files\n",
    );
    expect(r).toEqual({
      ok: true,
      tasks: [
        { query: "add two numbers", expect: ["get-sum"], where: "t.yaml:1:3" },
        { query: "read a file", expect: ["read_text_file"], toolset: "files", where: "t.yaml:3:3" },
      ],
    });
  });

  test("YAML errors name the file, line and column of each problem, all at once", () => {
    const r = readTasks(
      "t.yaml",
      'tasks:\n  - query: ""\n    expect: [a]\n  - query: x\n    expect: []\n    toolsets: files\n  - 5\n',
    );
    expect(r).toEqual({
      ok: false,
      errors: [
        "t.yaml:2:12: query is empty (write what a person would ask for, in their words)",
        "t.yaml:5:13: expect must list the tools (exposed names) that are a right answer",
        't.yaml:6:5: unknown key "toolsets" (a task has query, expect, toolset)',
        "t.yaml:7:5: a task is a mapping {query, expect, toolset?}",
      ],
    });
  });

  test("JSONL: one task a line, comments and blank lines skipped, a bad line named by its number", () => {
    const r = readTasks(
      "t.jsonl",
      '{"query": "a", "expect": ["x"]}\n\n# note\n{"query": "b", "expect": ["y"], "toolset": "s"}\nnot json\n',
    );
    expect(r).toEqual({
      ok: false,
      errors: ['t.jsonl:5:1: not JSON (a tasks .jsonl file has one {"query", "expect"} object a line)'],
    });
    const ok = readTasks("t.jsonl", '{"query": "a", "expect": ["x"]}\n');
    expect(ok).toEqual({ ok: true, tasks: [{ query: "a", expect: ["x"], where: "t.jsonl:1:1" }] });
  });

  test("a query longer than find_tools takes is refused before anything is searched", () => {
    const r = readTasks("t.jsonl", JSON.stringify({ query: "a".repeat(1025), expect: ["x"] }));
    expect(r.ok).toBe(false);
  });
});

describe("the figures", () => {
  const ranked: Record<string, string[]> = {
    "q one": ["a", "b", "c"],
    "q two": ["b", "c", "d", "e", "a"],
    "q three": ["c", "b"],
    "q four": Array.from({ length: 25 }, (_, i) => `z${i}`).concat("a"),
  };
  const tasks = [
    task("q one", ["a"]),
    task("q two", ["a", "e"]),
    task("q three", ["b"], "s2"),
    task("q four", ["a"]),
  ];
  const scores = scoreTasks(
    tasks,
    (q) => ranked[q]!.slice(0, RANK_DEPTH),
    (t) => t.toolset ?? "s1",
    ["s1", "s2", "s3"],
  );

  test("recall@1, recall@5 and MRR over every task, ranks past 20 counting as not found", () => {
    expect(scores.overall.tasks).toBe(4);
    expect(scores.overall.recall_at_1).toBe(0.25);
    expect(scores.overall.recall_at_5).toBe(0.75);
    expect(scores.overall.mrr).toBeCloseTo((1 + 1 / 4 + 1 / 2 + 0) / 4, 12);
  });

  test("per toolset, in the order given, toolsets without tasks left out", () => {
    expect(Object.keys(scores.by_toolset)).toEqual(["s1", "s2"]);
    expect(scores.by_toolset.s2).toEqual({ tasks: 1, recall_at_1: 0, recall_at_5: 1, mrr: 0.5 });
  });

  test("a miss says what came first, what was expected and at which rank", () => {
    expect(scores.misses.map((m) => [m.query, m.first, m.rank])).toEqual([
      ["q two", "b", 4],
      ["q three", "c", 2],
      ["q four", "z0", undefined],
    ]);
    expect(scores.misses[1]?.toolset).toBe("s2");
  });

  test("the rank is the first expected tool's", () => {
    expect(rankOf(["x", "b", "a"], ["a", "b"])).toBe(2);
    expect(rankOf([], ["a"])).toBeUndefined();
  });
});

describe("before searching", () => {
  const catalog = catalogOf(`
upstreams: { u: { command: u }, v: { command: v } }
toolsets:
  files: { description: Files on disk., tools: [u/*] }
  notes: { tools: [v/*] }
`);
  const inventory = inventoryOf({ u: ["read_file", "list_dir"], v: ["remember", "forget"] });
  const all = resolve(catalog, wholeCatalog(catalog, true), inventory);

  test("an expected tool find_tools cannot find, and a toolset that is not deferred, are errors", () => {
    const r = evaluateTasks(all, [task("x", ["rm_rf"]), task("y", ["remember"], "nowhere")]);
    expect(r).toEqual({
      ok: false,
      errors: [
        't.yaml:1:1: expected tool "rm_rf" is not one find_tools searches in this selection',
        't.yaml:1:1: toolset "nowhere" is not deferred in this selection (deferred: files, notes)',
      ],
    });
  });

  test("a selection that defers nothing is refused: find_tools would search nothing", () => {
    const s = select(catalog, "only=files");
    if (!s.ok) throw new Error(s.error);
    const r = evaluateTasks(resolve(catalog, s.selection, inventory), [task("x", ["read_file"])]);
    expect(r.ok).toBe(false);
  });

  test("a task names the toolset its first expected tool is in, or the one it searches", () => {
    const r = evaluateTasks(all, [task("read a file", ["read_file"]), task("forget", ["forget"], "notes")]);
    if (!r.ok) throw new Error(r.errors.join("\n"));
    expect(Object.keys(r.scores.by_toolset)).toEqual(["files", "notes"]);
    expect(r.tools).toBe(4);
  });

  test("the draft has one entry per searched tool, queries empty, and nothing of any description", () => {
    const catalog2 = catalogOf("upstreams: { u: { command: u } }\ntoolsets: { files: { tools: [u/*] } }\n");
    const inv = new Map([
      [
        "u",
        {
          status: "ready" as const,
          tools: [{ name: "read_file", description: "Read the complete contents of a file." }],
          prompts: [],
          resources: [],
          templates: [],
        },
      ],
    ]);
    const draft = draftTasks(searchedTools(resolve(catalog2, wholeCatalog(catalog2, true), inv)));
    expect(draft).toContain('expect: ["read_file"]');
    expect(draft).not.toMatch(/complete contents/);
    const read = readTasks("draft.yaml", draft);
    expect(read.ok).toBe(false);
    if (!read.ok) expect(read.errors[0]).toMatch(/^draft\.yaml:6:10: query is empty/);
  });
});

describe("the line that says whether eval met its floors", () => {
  const figure = { tools: 3, schema_bytes: 400, approx_tokens: 100 };
  const report = (recall1: number, recall5: number, thresholds: EvalReport["thresholds"]): EvalReport => ({
    selection: "everything",
    tasks: 4,
    tools: 3,
    toolsets: ["docs"],
    overall: { tasks: 4, recall_at_1: recall1, recall_at_5: recall5, mrr: recall1 },
    by_toolset: {},
    misses: [],
    surfaces: { listed: figure, deferred: figure },
    ...(thresholds ? { thresholds } : {}),
  });
  const last = (r: EvalReport) => evalText(r).split("\n").at(-1);

  test("FAILED names only the floors missed, each with what was measured", () => {
    expect(last(report(0.75, 1, { min_recall1: 0.99, min_recall5: 0.9, passed: false }))).toBe(
      "FAILED: recall@1 0.750 < 0.99",
    );
    expect(last(report(0.5, 0.6, { min_recall1: 0.9, min_recall5: 0.8, passed: false }))).toBe(
      "FAILED: recall@1 0.500 < 0.9, recall@5 0.600 < 0.8",
    );
    expect(last(report(0.9996, 1, { min_recall1: 1, passed: false }))).toBe("FAILED: recall@1 0.9996 < 1");
  });

  test("passed names every floor asked for", () => {
    expect(last(report(1, 1, { min_recall1: 0.9, min_recall5: 0.8, passed: true }))).toBe(
      "passed: recall@1 ≥ 0.9, recall@5 ≥ 0.8",
    );
  });
});
