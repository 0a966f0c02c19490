/** What a newcomer sees when starting the bundled example: the start line, a quiet log, a clear port conflict. */
import { spawn } from "node:child_process";
import { afterAll, beforeAll, expect, test } from "vitest";
import { CLI, FIXTURE, ROOT, runCli, type Served, serve, tempDir } from "../helpers/proc.js";

let served: Served;

beforeAll(async () => {
  served = await serve(["packs.example.yaml"]);
  // Both upstreams of the default selection are started at boot; wait until they are up.
  const until = Date.now() + 60_000;
  while ((served.stderr().match(/upstream ready/g)?.length ?? 0) < 2 && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 100));
  }
});
const tmp = tempDir();
afterAll(async () => {
  await served?.stop();
  tmp.cleanup();
});

test("the start line gives the URL and how to pick another port", () => {
  const port = new URL(served.base).port;
  expect(served.stderr()).toContain(
    `listening on http://127.0.0.1:${port}/mcp (another port: --port N or TOOLPACKS_PORT=N)`,
  );
});

test("starting the example logs no warning and no error", () => {
  const lines = served.stderr().trim().split("\n");
  expect(lines.filter((l) => l.includes("upstream ready"))).toHaveLength(2);
  expect(lines.filter((l) => !/^toolpacks info /.test(l))).toEqual([]);
});

test("a port already in use is reported with how to pick another", async () => {
  const port = new URL(served.base).port;
  const proc = spawn(
    process.execPath,
    [CLI, "serve", "--port", port, "--log-format", "text", "packs.example.yaml"],
    {
      cwd: ROOT,
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let err = "";
  proc.stderr.on("data", (c: Buffer) => {
    err += c.toString();
  });
  const code = await new Promise<number | null>((done) => proc.once("exit", done));
  expect(code).toBe(1);
  expect(err).toContain(
    `address already in use 127.0.0.1:${port} (is toolpacks already running? another port: --port N or TOOLPACKS_PORT=N)`,
  );
});

test("check warns of a later file's always: true that the first declaration wins over, naming both places", async () => {
  const base = tmp.file(
    "base.yaml",
    `upstreams:\n  main: { command: node, args: ["${FIXTURE}"] }\ntoolsets:\n  ops:\n    tools: [main/echo]\n`,
  );
  const team = tmp.file("team.yaml", "toolsets:\n  ops:\n    always: true\n    tools: [main/add]\n");
  const r = await runCli(["check", base, team]);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain(
    `\nwarnings:\n  ${team}:3:5: warning: toolset ops: always: true is ignored: its first declaration wins with always: false, the default (at ${base}:4:3)`,
  );
});

test("a missing relative config path names the working directory it was looked for in", async () => {
  const r = await runCli(["check", "packs.yml"], { cwd: tmp.dir });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(
    `packs.yml:1:1: cannot read config: no such file in the working directory ${tmp.dir} (a relative path is read from where toolpacks runs: give the path from there, or an absolute one)`,
  );
  const absolute = await runCli(["check", `${tmp.dir}/packs.yml`]);
  expect(absolute.stderr).toContain(`${tmp.dir}/packs.yml:1:1: cannot read config: no such file\n`);
});
