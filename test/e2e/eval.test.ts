/**
 * `toolpacks eval` through the real CLI on a real catalog (server-everything, server-filesystem and
 * server-memory from npm): the recall it reports is the recall a real SDK client gets from find_tools over the
 * MCP path, task for task; a saved catalog gives the same figures; floors exit 1; the draft; bad tasks files.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { httpClient, runCli, type Served, serve, tempDir } from "../helpers/proc.js";

const tmp = tempDir();
writeFileSync(join(tmp.dir, "notes.md"), "# notes\n");
const config = tmp.file(
  "packs.yaml",
  `# three real servers, each its own toolset
upstreams:
  everything: { command: mcp-server-everything }
  files: { command: mcp-server-filesystem, args: [${JSON.stringify(tmp.dir)}] }
  memory:
    command: mcp-server-memory
    env: { MEMORY_FILE_PATH: ${JSON.stringify(join(tmp.dir, "memory.jsonl"))} }
`,
);
/** Written for this test, in a user's words (never a tool's description): query, expected tools, their toolset. */
const TASKS: readonly { q: string; e: readonly string[]; g: string; t?: string }[] = [
  { q: "say this back to me", e: ["echo"], g: "everything" },
  { q: "add 3 and 4", e: ["get-sum"], g: "everything" },
  { q: "show me the environment variables", e: ["get-env"], g: "everything" },
  { q: "a tiny picture", e: ["get-tiny-image"], g: "everything" },
  { q: "compress a file with gzip", e: ["gzip-file-as-resource"], g: "everything" },
  { q: "start a long operation with progress", e: ["trigger-long-running-operation"], g: "everything" },
  { q: "ask the model to write something for me", e: ["trigger-sampling-request"], g: "everything" },
  {
    q: "ask the user for their name",
    e: ["trigger-elicitation-request", "trigger-url-elicitation"],
    g: "everything",
  },
  { q: "open notes.md and show its text", e: ["read_text_file", "read_file"], g: "files" },
  { q: "save this text to a new file", e: ["write_file"], g: "files" },
  { q: "change one line in a file", e: ["edit_file"], g: "files" },
  { q: "make a new folder", e: ["create_directory"], g: "files" },
  { q: "which files are in the folder", e: ["list_directory", "list_directory_with_sizes"], g: "files" },
  { q: "rename a file", e: ["move_file"], g: "files" },
  { q: "find files named like report", e: ["search_files"], g: "files" },
  { q: "how big is this file and when was it changed", e: ["get_file_info"], g: "files" },
  { q: "which folders may I use", e: ["list_allowed_directories"], g: "files" },
  { q: "read the file", e: ["read_text_file"], g: "files", t: "files" },
  { q: "remember a new person called Ada", e: ["create_entities"], g: "memory" },
  { q: "Ada knows Bob", e: ["create_relations"], g: "memory" },
  { q: "forget Bob entirely", e: ["delete_entities"], g: "memory" },
  { q: "everything you remember", e: ["read_graph"], g: "memory" },
  { q: "search my memory for Ada", e: ["search_nodes", "open_nodes"], g: "memory" },
];
const tasksFile = tmp.file(
  "tasks.yaml",
  `${TASKS.map(
    (x) =>
      `- query: ${JSON.stringify(x.q)}\n  expect: ${JSON.stringify(x.e)}${x.t ? `\n  toolset: ${x.t}` : ""}`,
  ).join("\n")}\n`,
);
const saved = join(tmp.dir, "catalog.json");

interface Figures {
  tasks: number;
  recall_at_1: number;
  recall_at_5: number;
  mrr: number;
}

async function evalJson(args: string[]) {
  const r = await runCli(["eval", config, ...args]);
  return { ...r, json: r.code === 0 || r.code === 1 ? JSON.parse(r.stdout) : undefined };
}

let served: Served;
let client: Client;
beforeAll(async () => {
  served = await serve([config]);
  client = await httpClient(served.url("defer=all"));
  const save = await runCli(["eval", config, "--save-catalog", saved]);
  if (save.code !== 0) throw new Error(save.stderr);
});
afterAll(async () => {
  await client?.close();
  await served?.stop();
  tmp.cleanup();
});

/** The first expected tool's rank among find_tools' answer (limit 20) over the MCP path, or undefined. */
async function rankOverMcp(query: string, expected: readonly string[], toolset?: string) {
  const r = await client.callTool({
    name: "find_tools",
    arguments: { query, limit: 20, ...(toolset ? { toolset } : {}) },
  });
  const names = (r.structuredContent as { tools: { name: string }[] }).tools.map((t) => t.name);
  const i = names.findIndex((n) => expected.includes(n));
  return i < 0 ? undefined : i + 1;
}

function figuresOf(ranks: (number | undefined)[]): Figures {
  const n = ranks.length;
  return {
    tasks: n,
    recall_at_1: ranks.filter((r) => r === 1).length / n,
    recall_at_5: ranks.filter((r) => r !== undefined && r <= 5).length / n,
    mrr: ranks.reduce<number>((s, r) => s + (r ? 1 / r : 0), 0) / n,
  };
}

describe("toolpacks eval", () => {
  test("the recall it reports is what find_tools answers a real client over the MCP path, task for task", async () => {
    const { code, json, stderr } = await evalJson(["--tasks", tasksFile, "--json"]);
    // Only the progress of reading the upstreams (one line each, SPEC §5), no error or warning.
    expect(stderr.split("\n").filter((l) => l && !/^connecting to|^ {2}\[\d+\/\d+\] \S+: /.test(l))).toEqual(
      [],
    );
    expect(code).toBe(0);
    const ranks = await Promise.all(TASKS.map((x) => rankOverMcp(x.q, x.e, x.t)));
    const overall = figuresOf(ranks);
    expect(json.overall.tasks).toBe(TASKS.length);
    expect(json.overall.recall_at_1).toBe(overall.recall_at_1);
    expect(json.overall.recall_at_5).toBe(overall.recall_at_5);
    expect(json.overall.mrr).toBeCloseTo(overall.mrr, 12);
    // Per toolset too: a task counts under the toolset of its first expected tool (or the one it searches).
    for (const name of ["everything", "files", "memory"]) {
      const mine = figuresOf(ranks.filter((_, i) => TASKS[i]!.g === name));
      expect(json.by_toolset[name]).toEqual({ ...mine, mrr: expect.closeTo(mine.mrr, 12) });
    }
    // Every task not answered first is a miss, with what came first.
    expect(json.misses.map((m: { query: string }) => m.query)).toEqual(
      TASKS.filter((_, i) => ranks[i] !== 1).map((x) => x.q),
    );
    // The same figures from the saved catalog, without starting anything.
    const again = await evalJson(["--tasks", tasksFile, "--json", "--catalog", saved]);
    expect(again.json.overall).toEqual(json.overall);
    expect(again.json.misses).toEqual(json.misses);
  });

  test("the three surfaces: everything listed, deferred (as the session lists it), and a client's", async () => {
    const { json } = await evalJson([
      "--tasks",
      tasksFile,
      "--json",
      "--catalog",
      saved,
      "--client",
      "cursor-vscode",
    ]);
    const listed = (await client.listTools()).tools.map((t) => t.name);
    expect(json.surfaces.deferred.tools).toBe(listed.length);
    expect(listed).toEqual(["find_tools", "call_tool", "list_server_toolsets"]);
    expect(json.surfaces.listed.tools).toBe(39 + 1);
    expect(json.surfaces.listed.approx_tokens).toBeGreaterThan(json.surfaces.deferred.approx_tokens * 5);
    // Cursor's 40 tools hold the 39 tools and list_server_toolsets: its profile defers nothing.
    expect(json.surfaces.client).toMatchObject({ client: "cursor-vscode", tools: 40 });
    expect(json.surfaces.client.profile).toMatchObject({
      client: ["cursor*"],
      from: "built-in",
      max_tools: 40,
    });
  });

  test("--min-recall1 and --min-recall5 exit 1 below the figures' floor, and 0 at or above it", async () => {
    const { json } = await evalJson(["--tasks", tasksFile, "--json", "--catalog", saved]);
    const r1 = json.overall.recall_at_1 as number;
    const base = ["eval", config, "--tasks", tasksFile, "--catalog", saved];
    const over = await runCli([...base, "--min-recall1", String(Math.min(1, r1 + 0.01))]);
    expect(over.code).toBe(1);
    expect(over.stdout).toContain(`FAILED: recall@1 ${r1.toFixed(3)} < ${Math.min(1, r1 + 0.01)}`);
    const at = await runCli([...base, "--min-recall1", String(r1), "--min-recall5", "0"]);
    expect(at.code).toBe(0);
    expect(at.stdout).toMatch(/passed: recall@1 ≥ [\d.]+, recall@5 ≥ 0/);
  });

  test("--draft writes one entry per searched tool with its query left empty, and never replaces a file unasked", async () => {
    const draft = join(tmp.dir, "draft.yaml");
    const r = await runCli(["eval", config, "--draft", "--tasks", draft, "--catalog", saved]);
    expect(r.code).toBe(0);
    const text = readFileSync(draft, "utf8");
    expect(text.match(/^- query: ""$/gm)).toHaveLength(39);
    expect(text).toContain('expect: ["directory_tree"]');
    // Nothing of a description: the person writes the words.
    expect(text).not.toMatch(/recursive|JSON structure/i);
    const again = await runCli(["eval", config, "--draft", "--tasks", draft, "--catalog", saved]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/exists \(pass --force to replace it\)/);
    // Run as it is, the draft is refused: every query is still empty.
    const run = await runCli(["eval", config, "--tasks", draft, "--catalog", saved]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/draft\.yaml:6:10: query is empty/);
  });

  test("a tasks file's problems are all reported at their positions, and nothing is searched", async () => {
    const bad = tmp.file(
      "bad.yaml",
      "- query: list files\n  expect: [no_such_tool]\n- query: x\n  expect: [echo]\n  toolset: nowhere\n",
    );
    const r = await runCli(["eval", config, "--tasks", bad, "--catalog", saved]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(
      `${bad}:1:3: expected tool "no_such_tool" is not one find_tools searches in this selection`,
    );
    expect(r.stderr).toContain(`${bad}:3:3: toolset "nowhere" is not deferred in this selection`);
  });
});
