/**
 * What `toolpacks serve` loads before its first answer: a client that launches it over stdio at every start waits
 * for it. The heavy modules (the SDK and its zod schemas, ajv's compiler, prom-client's index with its default
 * metrics) must stay off that path; they cost more CPU than the rest of the proxy together. Speed itself is
 * measured by `npm run bench`, never asserted here.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, expect, test } from "vitest";
import { CLI, ROOT, tempDir } from "../helpers/proc.js";

const PRELOAD = join(ROOT, "test/helpers/loaded-modules.mjs");
const ECHO = join(ROOT, "test/fixtures/echo-server.mjs");
const tmp = tempDir();
const config = tmp.file("packs.yaml", `upstreams:\n  echo: { command: node, args: ["${ECHO}"] }\n`);
afterAll(() => tmp.cleanup());

/** Modules that must not load before the first tools/list is answered (paths inside node_modules). */
const HEAVY = [
  "/node_modules/@modelcontextprotocol/sdk/",
  "/node_modules/zod/",
  "/node_modules/ajv/dist/compile/",
  "/node_modules/ajv-formats/",
  "/node_modules/prom-client/index.js",
  "/node_modules/@opentelemetry/",
  "/node_modules/undici/",
  "/node_modules/ioredis/",
  "/node_modules/jose/",
  "/node_modules/minisearch/",
];

function heavyLoaded(log: string): string[] {
  const lines = readFileSync(log, "utf8").split("\n");
  // The serving code did load (the CLI is bundled: scripts/bundle-cli.mjs names its chunks cli-*).
  expect(lines.some((l) => l.includes("/dist/cli-serve-run.js"))).toBe(true);
  return HEAVY.filter((h) => lines.some((l) => l.includes(h))).map((h) => h.replace("/node_modules/", ""));
}

test("over stdio, the first tools/list is answered without loading the SDK, zod, ajv's compiler or prom-client's index", async () => {
  const log = join(tmp.dir, "stdio.log");
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--import", PRELOAD, CLI, "serve", "--transport", "stdio", "--log-level", "warn", config],
    cwd: ROOT,
    env: { ...(process.env as Record<string, string>), TOOLPACKS_LOADED_LOG: log },
    stderr: "ignore",
  });
  const client = new Client({ name: "startup-test", version: "1.0.0" });
  await client.connect(transport);
  expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["echo", "list_server_toolsets"]);
  await client.close();
  expect(heavyLoaded(log)).toEqual([]);
});

test("over HTTP, the first tools/list is answered without loading the SDK, zod, ajv's compiler or prom-client's index", async () => {
  const log = join(tmp.dir, "http.log");
  const proc = spawn(
    process.execPath,
    ["--import", PRELOAD, CLI, "serve", "--port", "0", "--log-format", "text", config],
    {
      cwd: ROOT,
      env: { ...process.env, TOOLPACKS_LOADED_LOG: log },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  const exited = new Promise<void>((done) => proc.once("exit", () => done()));
  try {
    let err = "";
    const base = await new Promise<string>((ok, fail) => {
      proc.stderr.on("data", (c: Buffer) => {
        err += c.toString();
        const m = /listening on (http:\/\/\S+)/.exec(err);
        if (m) ok(m[1]!);
      });
      proc.once("exit", () => fail(new Error(`exited before listening: ${err}`)));
    });
    const client = new Client({ name: "startup-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(base)));
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["echo", "list_server_toolsets"]);
    await client.close();
  } finally {
    proc.kill("SIGTERM");
    await exited;
  }
  expect(heavyLoaded(log)).toEqual([]);
});

test("the upstream spawned before the serving code loads is the one that serves: one process, not two", async () => {
  const starts = join(tmp.dir, "starts.txt");
  const counted = tmp.file(
    "counted.yaml",
    // `protocol: auto`: the era is asked of this same process (SPEC §12.7), no start of its own.
    `upstreams:\n  echo: { command: sh, args: ["-c", "echo started >> '${starts}'; exec node '${ECHO}'"] }\n`,
  );
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "serve", "--transport", "stdio", "--log-level", "warn", counted],
    cwd: ROOT,
    stderr: "ignore",
  });
  const client = new Client({ name: "startup-test", version: "1.0.0" });
  await client.connect(transport);
  expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["echo", "list_server_toolsets"]);
  await client.close();
  expect(readFileSync(starts, "utf8")).toBe("started\n");
});
