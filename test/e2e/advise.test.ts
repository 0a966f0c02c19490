/**
 * `toolpacks advise` through the real CLI, from an audit log that real sessions of real servers (npm's
 * server-everything, server-filesystem, server-memory) wrote through `toolpacks serve`: the table, a diff of
 * the user's own file that keeps its comments, `--write` only when check passes; and from a live /metrics.
 */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { CLI, httpClient, ROOT, runCli, serve, tempDir, until } from "../helpers/proc.js";

const tmp = tempDir();
writeFileSync(join(tmp.dir, "notes.md"), "# notes\n");
const audit = join(tmp.dir, "audit.jsonl");
const CONFIG = `# The team's gateway. Keep this comment.
audit: { file: ${JSON.stringify(audit)} }
upstreams:
  everything: { command: mcp-server-everything }
  files: { command: mcp-server-filesystem, args: [${JSON.stringify(tmp.dir)}] }
  memory:
    command: mcp-server-memory
    env: { MEMORY_FILE_PATH: ${JSON.stringify(join(tmp.dir, "memory.jsonl"))} }

toolsets:
  # used every day
  basics:
    title: Basics
    tools: [everything/echo, everything/get-sum]

  files:
    title: Files
    description: The project folder.
    # every tool of the server
    tools: [files/*]

  notes:
    default: false
    tools: [memory/*]
`;
const config = tmp.file("packs.yaml", CONFIG);
const saved = join(tmp.dir, "catalog.json");

interface Row {
  toolset: string;
  tokens: number;
  sessions: number;
  calledIn: number;
  calls: number;
  suggestion: string;
  edit?: { key: string; value: boolean };
}

beforeAll(async () => {
  // Real sessions: three at the bare URL calling a basics tool, one that asks for notes and reads the graph.
  const served = await serve([config]);
  try {
    for (let i = 0; i < 3; i++) {
      const c = await httpClient(served.url());
      await c.callTool({ name: "echo", arguments: { message: `hi ${i}` } });
      await c.close();
    }
    const c = await httpClient(served.url("notes"));
    await c.callTool({ name: "read_graph", arguments: {} });
    await c.callTool({ name: "get-sum", arguments: { a: 1, b: 2 } });
    await c.close();
  } finally {
    await served.stop();
  }
  const save = await runCli(["eval", config, "--save-catalog", saved]);
  if (save.code !== 0) throw new Error(save.stderr);
});
afterAll(() => tmp.cleanup());

describe("toolpacks advise from the audit log", () => {
  test("the log the sessions wrote: one line per call, with each session's selection", () => {
    const lines = readFileSync(audit, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(5);
    expect(new Set(lines.map((l) => l.session)).size).toBe(4);
    expect(lines.map((l) => l.selection)).toContain("basics,files,notes");
  });

  test("the table joins each toolset's cost a turn with its use, and suggests turning off what nobody called", async () => {
    const r = await runCli(["advise", config, "--audit", audit, "--json"]);
    // Only the progress of reading the upstreams (one line each, SPEC §5), no error or warning.
    expect(
      r.stderr.split("\n").filter((l) => l && !/^connecting to|^ {2}\[\d+\/\d+\] \S+: /.test(l)),
    ).toEqual([]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    const rows = Object.fromEntries((report.toolsets as Row[]).map((x) => [x.toolset, x]));
    expect(report.usage).toMatchObject({ sessions: 4, calls: 5 });
    expect(rows.basics).toMatchObject({ sessions: 4, calledIn: 4, calls: 4 });
    expect(rows.basics?.suggestion).toMatch(/^keep: called in most/);
    expect(rows.files).toMatchObject({
      sessions: 4,
      calledIn: 0,
      calls: 0,
      edit: { key: "default", value: false },
    });
    expect(rows.files?.tokens).toBeGreaterThan(1000);
    expect(rows.notes).toMatchObject({ sessions: 1, calledIn: 1, calls: 1 });
    expect(report.changes).toEqual([{ toolset: "files", key: "default", value: false }]);
    // The saving is files' own tools at the bare URL.
    expect(report.saving.default_selection.saved_tokens).toBeGreaterThan(rows.files!.tokens - 5);
    expect(report.saving.default_selection.after.tools).toBe(
      report.saving.default_selection.before.tools - 14,
    );
  });

  test("the suggestion is a diff of the user's own file that keeps its comments and layout; nothing is written", async () => {
    const r = await runCli(["advise", config, "--audit", audit, "--catalog", saved]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`--- a/${config}\n+++ b/${config}\n`);
    expect(r.stdout).toContain(
      "     description: The project folder.\n+    default: false\n     # every tool of the server\n",
    );
    expect(r.stdout).toMatch(/saves ≈\d+ tokens a turn at a URL that names nothing/);
    expect(readFileSync(config, "utf8")).toBe(CONFIG);
  });

  test("--write applies exactly that change to the file, and the file then passes check", async () => {
    const copy = tmp.file("copy.yaml", CONFIG);
    const r = await runCli(["advise", copy, "--audit", audit, "--catalog", saved, "--write"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/written: .*copy\.yaml \(check passed on the result\)/);
    const after = readFileSync(copy, "utf8");
    expect(after).toBe(
      CONFIG.replace(
        "    description: The project folder.\n",
        "    description: The project folder.\n    default: false\n",
      ),
    );
    expect((await runCli(["check", copy])).code).toBe(0);
  });
});

describe("toolpacks advise from /metrics", () => {
  test("read twice a period apart, it counts the calls made between the readings", async () => {
    const plain = tmp.file("plain.yaml", CONFIG.replace(/^audit:.*\n/m, ""));
    const served = await serve([plain]);
    try {
      const before = await httpClient(served.url());
      await before.callTool({ name: "echo", arguments: { message: "before" } });
      const proc = spawn(
        process.execPath,
        [
          CLI,
          "advise",
          plain,
          "--metrics",
          `${served.base}/metrics`,
          "--period",
          "3",
          "--catalog",
          saved,
          "--json",
        ],
        { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
      );
      let out = "";
      let err = "";
      proc.stdout.on("data", (c: Buffer) => {
        out += c.toString();
      });
      proc.stderr.on("data", (c: Buffer) => {
        err += c.toString();
      });
      const code = new Promise<number | null>((ok) => proc.once("close", ok));
      await until(() => err.includes("reading it again"), "the first reading");
      await before.callTool({ name: "echo", arguments: { message: "between" } });
      await before.callTool({ name: "get-sum", arguments: { a: 1, b: 1 } });
      expect(await code).toBe(0);
      const report = JSON.parse(out);
      const rows = Object.fromEntries((report.toolsets as Row[]).map((x) => [x.toolset, x]));
      expect(report.usage.calls).toBe(2);
      expect(rows.basics).toMatchObject({ calls: 2, sessions: 1 });
      expect(rows.basics?.calledIn).toBeUndefined();
      expect(report.usage.from).toMatch(/between two readings/);
      await before.close();
    } finally {
      await served.stop();
    }
  });

  test("a /metrics that cannot be read is a clear error, exit 2", async () => {
    const r = await runCli(["advise", config, "--metrics", "http://127.0.0.1:9/metrics", "--catalog", saved]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^toolpacks advise: http:\/\/127\.0\.0\.1:9\/metrics: /);
  });
});
