/** Real child processes for end-to-end tests: the CLI, its children, and their cleanup. */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll } from "vitest";

export const ROOT = resolve(import.meta.dirname, "../..");
export const CLI = join(ROOT, "dist/cli.js");
export const FIXTURE = join(ROOT, "test/fixtures/fixture-server.mjs");

export interface Served {
  readonly proc: ChildProcess;
  readonly base: string;
  readonly url: (query?: string) => string;
  stderr(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const running = new Set<ChildProcess>();
process.on("exit", () => {
  for (const p of running) p.kill("SIGKILL");
});

export function tempDir(): { dir: string; file(name: string, text: string): string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), "toolpacks-test-"));
  return {
    dir,
    file: (name, text) => {
      const p = join(dir, name);
      writeFileSync(p, text);
      return p;
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Starts `toolpacks serve --port 0 ARGS` and waits for its "listening on" line. */
export async function serve(args: string[], env: Record<string, string> = {}): Promise<Served> {
  const proc = spawn(process.execPath, [CLI, "serve", "--port", "0", "--log-format", "text", ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(proc);
  let err = "";
  proc.stderr!.on("data", (c: Buffer) => {
    err += c.toString();
  });
  const base = await new Promise<string>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`no listening line: ${err}`)), 20_000);
    const check = () => {
      const m = /listening on (http:\/\/[^\s/]+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        ok(m[1]!);
      }
    };
    proc.stderr!.on("data", check);
    proc.once("exit", (code) => {
      clearTimeout(timer);
      fail(new Error(`serve exited with ${code}: ${err}`));
    });
  });
  const exited = new Promise<number | null>((ok) => proc.once("exit", (code) => ok(code)));
  return {
    proc,
    base,
    url: (query = "") => `${base}/mcp${query ? `?${query}` : ""}`,
    stderr: () => err,
    stop: async (signal = "SIGTERM") => {
      if (proc.exitCode === null) proc.kill(signal);
      const code = await exited;
      running.delete(proc);
      return code;
    },
  };
}

/**
 * One `toolpacks serve ARGS` for a test file: started before its tests, stopped after them with every HTTP
 * client `open` made, then `cleanup`.
 */
export function servedForFile(args: string[], cleanup: () => void = () => {}) {
  let served: Served | undefined;
  const clients: Client[] = [];
  beforeAll(async () => {
    served = await serve(args);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await served?.stop();
    cleanup();
  });
  return {
    served: () => served!,
    open: async (query = "") => {
      const c = await httpClient(served!.url(query));
      clients.push(c);
      return c;
    },
  };
}

export async function httpClient(
  url: string,
  capabilities = {},
  headers?: Record<string, string>,
): Promise<Client> {
  const client = new Client({ name: "e2e", version: "1.0.0" }, { capabilities });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), headers ? { requestInit: { headers } } : {}),
  );
  return client;
}

export async function stdioClient(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ client: Client; pid: () => number | null }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "serve", "--transport", "stdio", ...args],
    cwd: ROOT,
    env: { ...(process.env as Record<string, string>), TOOLPACKS_LOG_LEVEL: "warn", ...env },
    stderr: "pipe",
  });
  const client = new Client({ name: "e2e-stdio", version: "1.0.0" });
  await client.connect(transport);
  return { client, pid: () => transport.pid };
}

/** Process ids of every descendant of `pid` (from /proc). */
export function descendants(pid: number): number[] {
  try {
    const out = execFileSync("ps", ["-e", "-o", "pid=,ppid="], { encoding: "utf8" });
    const children = new Map<number, number[]>();
    for (const line of out.trim().split("\n")) {
      const [p, pp] = line.trim().split(/\s+/).map(Number);
      children.set(pp!, [...(children.get(pp!) ?? []), p!]);
    }
    const all: number[] = [];
    const walk = (q: number) => {
      for (const c of children.get(q) ?? []) {
        all.push(c);
        walk(c);
      }
    };
    walk(pid);
    return all;
  } catch {
    return [];
  }
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export const toolNames = async (c: Client) => (await c.listTools()).tools.map((t) => t.name);

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end, stdout and stderr piped (not a terminal); `undefined` env values unset. */
export function runToEnd(
  command: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string | undefined> } = {},
): Promise<Run> {
  const env: Record<string, string | undefined> = { ...process.env, ...options.env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  return new Promise((resolve, reject) => {
    const proc = spawn(command, args, {
      cwd: options.cwd ?? ROOT,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    proc.stdout!.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    proc.stderr!.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    proc.once("error", reject);
    proc.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs a Node script (ours: the CLI, a conformance runner) to its end, on this Node. */
export function runScript(
  script: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string | undefined> } = {},
): Promise<Run> {
  return runToEnd(process.execPath, [script, ...args], options);
}

/** Runs `toolpacks ARGS` to its end. */
export function runCli(
  args: string[],
  options: { cwd?: string; env?: Record<string, string | undefined> } = {},
): Promise<Run> {
  return runScript(CLI, args, options);
}

/** Polls `check` until it gives something truthy; fails naming `what` after `ms` (a wait, never an assertion). */
export async function until<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  ms = 20_000,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`no ${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Starts `node ARGS` (an HTTP server) and resolves once it prints `listening on http://127.0.0.1:PORT` on
 * stderr. The caller kills it (register `proc.kill("SIGKILL")` as a cleanup).
 */
export function startListening(
  args: string[],
  env: Record<string, string> = {},
): { proc: ChildProcess; listening: Promise<number> } {
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const listening = new Promise<number>((ok, fail) => {
    let err = "";
    proc.stderr!.on("data", (c: Buffer) => {
      err += c.toString();
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(err);
      if (m) ok(Number(m[1]));
    });
    proc.once("exit", () => fail(new Error(`${args.join(" ")} exited: ${err}`)));
  });
  return { proc, listening };
}
