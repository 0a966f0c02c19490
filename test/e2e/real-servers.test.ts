/**
 * Real MCP servers from npm (devDependencies, all offline) listed and called through `toolpacks serve` with a
 * real SDK client: sequential-thinking, postgres (against a PostgreSQL the test starts), kubernetes (listing
 * only), git (in place of desktop-commander, whose dependencies download binaries at install time) and
 * server-everything over Streamable HTTP, restarted in the middle of a session.
 */
import { type ChildProcess, execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { httpClient, ROOT, type Served, serve, startListening, tempDir } from "../helpers/proc.js";
import { unless } from "../helpers/skip.js";

const tmp = tempDir();
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(() => tmp.cleanup());

async function through(yaml: string): Promise<{ served: Served; client: Client }> {
  const served = await serve([tmp.file(`p-${Math.random().toString(36).slice(2)}.yaml`, yaml)]);
  cleanups.push(() => served.stop());
  const client = await httpClient(served.url());
  cleanups.push(() => client.close());
  return { served, client };
}

const names = async (c: Client) => (await c.listTools()).tools.map((t) => t.name);
const textOf = (r: Record<string, unknown>) =>
  (r.content as { text?: string }[]).map((c) => c.text ?? "").join("");

async function unavailable(served: Served): Promise<unknown[]> {
  const report = (await (await fetch(`${served.base}/toolsets`)).json()) as { unavailable?: unknown[] };
  return report.unavailable ?? [];
}

test("@modelcontextprotocol/server-sequential-thinking is listed and called", async () => {
  const { client } = await through("upstreams:\n  think: { command: mcp-server-sequential-thinking }\n");
  expect(await names(client)).toContain("sequentialthinking");
  const r = await client.callTool({
    name: "sequentialthinking",
    arguments: { thought: "one step", thoughtNumber: 1, totalThoughts: 1, nextThoughtNeeded: false },
  });
  expect(JSON.parse(textOf(r))).toMatchObject({
    thoughtNumber: 1,
    totalThoughts: 1,
    nextThoughtNeeded: false,
  });
});

test("mcp-server-kubernetes (resources advertised, templates/list answered -32601) is listed", async () => {
  // A cluster on a closed loopback port, never contacted for listing; no kubeconfig of this machine is read.
  const kubeconfig = tmp.file(
    "kubeconfig.yaml",
    `apiVersion: v1
kind: Config
clusters: [{ name: none, cluster: { server: "https://127.0.0.1:1" } }]
users: [{ name: none, user: {} }]
contexts: [{ name: none, context: { cluster: none, user: none } }]
current-context: none
`,
  );
  const { served, client } = await through(
    `upstreams:\n  k8s: { command: mcp-server-kubernetes, env: { KUBECONFIG: "${kubeconfig}" }, connect_timeout: 60 }\n`,
  );
  const tools = await names(client);
  expect(tools).toEqual(expect.arrayContaining(["kubectl_get", "kubectl_describe", "ping"]));
  expect(await unavailable(served)).toEqual([]);
});

test("@cyanheads/git-mcp-server (in place of desktop-commander) reads a real repository", async () => {
  const repo = join(tmp.dir, "repo");
  execFileSync("git", ["init", "-q", repo]);
  execFileSync("git", [
    "-C",
    repo,
    "-c",
    "user.name=t",
    "-c",
    "user.email=t@t",
    "commit",
    "-q",
    "--allow-empty",
    "-m",
    "first commit",
  ]);
  const { client } = await through(
    "upstreams:\n  git: { command: git-mcp-server, env: { MCP_TRANSPORT_TYPE: stdio, MCP_LOG_LEVEL: error }, connect_timeout: 60 }\n",
  );
  expect(await names(client)).toEqual(expect.arrayContaining(["git_log", "git_status", "git_diff"]));
  const r = await client.callTool({ name: "git_log", arguments: { path: repo, maxCount: 1 } });
  expect(r.structuredContent).toMatchObject({ success: true, commits: [{ subject: "first commit" }] });
});

describe("@modelcontextprotocol/server-postgres against a real PostgreSQL", () => {
  const BIN = "/usr/lib/postgresql/15/bin";
  const missing = existsSync(join(BIN, "initdb"))
    ? undefined
    : "PostgreSQL 15 is not installed: apt-get install postgresql (.ci/run does), then run this file again";
  const root = process.getuid?.() === 0;
  let dir = "";
  const as = (cmd: string, args: string[]) =>
    root
      ? execFileSync("runuser", ["-u", "postgres", "--", join(BIN, cmd), ...args], { stdio: "pipe" })
      : execFileSync(join(BIN, cmd), args, { stdio: "pipe" });

  beforeAll(() => {
    if (missing) return;
    // A socket directory of our own: no TCP port at all.
    dir = mkdtempSync(join(tmpdir(), "toolpacks-pg-"));
    if (root) {
      const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }));
      const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }));
      chownSync(dir, uid, gid);
    }
    as("initdb", ["-D", join(dir, "data"), "-U", "postgres", "--auth=trust", "-E", "UTF8"]);
    as("pg_ctl", [
      "-D",
      join(dir, "data"),
      "-l",
      join(dir, "log"),
      "-w",
      "-o",
      `-k ${dir} -c listen_addresses='' -c fsync=off`,
      "start",
    ]);
    as("psql", [
      "-h",
      dir,
      "-U",
      "postgres",
      "-c",
      "create table pets(name text); insert into pets values ('rex'), ('tom');",
    ]);
  }, 60_000);
  afterAll(() => {
    if (!dir) return;
    try {
      as("pg_ctl", ["-D", join(dir, "data"), "-m", "immediate", "stop"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test.skipIf(missing !== undefined)(
    unless(missing, "its query tool reads a table, and its schema resources are listed"),
    async () => {
      const url = `postgresql://postgres@localhost/postgres?host=${dir}`;
      const { served, client } = await through(
        `upstreams:\n  pg: { command: mcp-server-postgres, args: ["${url}"] }\n`,
      );
      expect(await names(client)).toContain("query");
      const r = await client.callTool({
        name: "query",
        arguments: { sql: "select name from pets order by name" },
      });
      expect(JSON.parse(textOf(r))).toEqual([{ name: "rex" }, { name: "tom" }]);
      const resources = (await client.listResources()).resources.map((x) => x.name);
      expect(resources).toContain('"pets" database schema');
      expect(await unavailable(served)).toEqual([]);
    },
  );
});

describe("@modelcontextprotocol/server-everything over Streamable HTTP", () => {
  const EVERYTHING = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
  const PRELOAD = join(ROOT, "test/fixtures/loopback-listen.mjs");

  async function everything(port = 0): Promise<{ proc: ChildProcess; port: number }> {
    const { proc, listening } = startListening(["--import", PRELOAD, EVERYTHING, "streamableHttp"], {
      PORT: String(port),
    });
    cleanups.push(() => proc.kill("SIGKILL"));
    return { proc, port: await listening };
  }

  test("after it restarts (answering our stale session with 400), the next call succeeds", async () => {
    const first = await everything();
    const { served, client } = await through(
      `upstreams:\n  every: { url: "http://127.0.0.1:${first.port}/mcp" }\n`,
    );
    expect(await names(client)).toContain("echo");
    const before = await client.callTool({ name: "echo", arguments: { message: "one" } });
    expect(textOf(before)).toBe("Echo: one");
    first.proc.kill("SIGKILL");
    await new Promise((r) => first.proc.once("exit", r));
    await everything(first.port);
    const after = await client.callTool({ name: "echo", arguments: { message: "two" } });
    expect(textOf(after)).toBe("Echo: two");
    expect(served.stderr()).toMatch(
      /the upstream no longer knows our session \(HTTP 400[^\n]*starting again/,
    );
    expect(served.stderr()).not.toMatch(/pid=undefined/);
  });
});
