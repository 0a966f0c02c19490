/** stdio upstreams against real child processes: process groups, bounded line reading, refresh, missing lists. */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import type { UpstreamState } from "../../src/catalog/inventory.js";
import type { Upstream } from "../../src/catalog/types.js";
import { silentLogger } from "../../src/log.js";
import { type ConnectionHooks, UpstreamConnection } from "../../src/upstream/connection.js";
import { LeanStdioTransport } from "../../src/upstream/stdio-transport.js";
import { catalogOf } from "../helpers/catalog.js";
import { FIXTURE, ROOT, stdioClient, tempDir, until } from "../helpers/proc.js";

const ROUGH = join(ROOT, "test/fixtures/rough-server.mjs");
const LAUNCHER = join(ROOT, "test/fixtures/no-forward-launcher.mjs");

const tmp = tempDir();
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
process.on("exit", () => tmp.cleanup());

/** A process that exists and is not a zombie (an unreaped orphan still answers signal 0). */
function living(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^[ZX]$/.test(stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3));
  } catch {
    return false;
  }
}

/** Live (non-zombie) processes whose process group is `pgid`, as ps sees them. */
function groupMembers(pgid: number): number[] {
  const out = execFileSync("ps", ["-e", "-o", "pid=,pgid=,stat="], { encoding: "utf8" });
  return out
    .trim()
    .split("\n")
    .map((l) => l.trim().split(/\s+/))
    .filter(([, g, stat]) => Number(g) === pgid && !stat!.startsWith("Z"))
    .map(([p]) => Number(p));
}

function pidsOf(file: string): Promise<{ launcher: number; server: number }> {
  return until(
    () =>
      existsSync(file) && (JSON.parse(readFileSync(file, "utf8")) as { launcher: number; server: number }),
    "pids file",
  );
}

function upstream(args: string[], extra: Partial<Upstream> = {}): Upstream {
  const yaml = `upstreams:\n  rough: { command: node, args: ${JSON.stringify(args)}, call_timeout: 30 }\n`;
  return { ...catalogOf(yaml).upstreams.get("rough")!, cwd: ROOT, ...extra };
}

function connect(spec: Upstream, hooks: ConnectionHooks = {}): UpstreamConnection {
  const c = new UpstreamConnection(spec, {
    clientName: "t",
    clientVersion: "1",
    logger: silentLogger,
    hooks,
  });
  cleanups.push(() => c.close());
  return c;
}

const toolNames = (s: UpstreamState | undefined) => (s?.status === "ready" ? s.tools.map((t) => t.name) : []);

describe("a stdio upstream's process group", () => {
  test("closing it ends the server its launcher started, even one deaf to stdin EOF and SIGTERM", async () => {
    const file = join(tmp.dir, "pids-close.json");
    const transport = new LeanStdioTransport(
      {
        command: process.execPath,
        args: [LAUNCHER, file, FIXTURE, "--linger", "--ignore-sigterm"],
        env: process.env as Record<string, string>,
        cwd: ROOT,
      },
      undefined,
      { killGraceMs: 300 },
    );
    await transport.start();
    const pids = await pidsOf(file);
    cleanups.push(() => {
      for (const p of [pids.server, pids.launcher]) if (living(p)) process.kill(p, "SIGKILL");
    });
    expect(living(pids.server)).toBe(true);
    await transport.close();
    expect(living(pids.launcher)).toBe(false);
    expect(living(pids.server)).toBe(false);
    expect(groupMembers(pids.launcher)).toEqual([]);
  });

  test("a second close waits for the first: neither resolves while a process of the group lives", async () => {
    const transport = new LeanStdioTransport(
      {
        command: process.execPath,
        args: [FIXTURE, "--linger", "--ignore-sigterm"],
        env: process.env as Record<string, string>,
        cwd: ROOT,
      },
      undefined,
      { killGraceMs: 300 },
    );
    await transport.start();
    const pid = transport.pid!;
    cleanups.push(() => {
      if (living(pid)) process.kill(pid, "SIGKILL");
    });
    const first = transport.close();
    await transport.close();
    expect(living(pid)).toBe(false);
    await first;
  });

  test("when the launcher dies on its own, the server it left behind is ended too", async () => {
    const file = join(tmp.dir, "pids-crash.json");
    const transport = new LeanStdioTransport(
      {
        command: process.execPath,
        args: [LAUNCHER, file, FIXTURE, "--linger"],
        env: process.env as Record<string, string>,
        cwd: ROOT,
      },
      undefined,
      { killGraceMs: 300 },
    );
    let closed = false;
    transport.onclose = () => {
      closed = true;
    };
    await transport.start();
    const pids = await pidsOf(file);
    cleanups.push(() => {
      for (const p of [pids.server, pids.launcher]) if (living(p)) process.kill(p, "SIGKILL");
    });
    process.kill(pids.launcher, "SIGKILL");
    await until(() => !living(pids.server), "end of the orphaned server");
    await until(() => closed, "onclose");
    expect(groupMembers(pids.launcher)).toEqual([]);
  });

  test("no process of an upstream's group outlives the stdio session of `toolpacks serve`", async () => {
    const file = join(tmp.dir, "pids-serve.json");
    const config = tmp.file(
      "group.yaml",
      `upstreams:\n  stubborn: { command: node, args: ${JSON.stringify([LAUNCHER, file, FIXTURE, "--linger", "--ignore-sigterm", "--tools", "echo"])} }\n`,
    );
    const { client, pid } = await stdioClient([config]);
    const proxy = pid()!;
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("echo");
    const pids = await pidsOf(file);
    cleanups.push(() => {
      for (const p of [pids.server, pids.launcher]) if (living(p)) process.kill(p, "SIGKILL");
    });
    await client.close();
    await until(() => !living(proxy), "exit of toolpacks");
    expect(living(pids.server)).toBe(false);
    expect(groupMembers(pids.launcher)).toEqual([]);
  });
});

describe("reading an upstream's lines", () => {
  test("a line over max_line_bytes fails the call with the limit and the upstream named, memory bounded", async () => {
    const c = connect(upstream([ROUGH], { maxLineBytes: 1 << 20 }));
    expect((await c.ensure()).status).toBe("ready");
    const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))![1]) * 1024;
    const before = rss();
    const err = (await c
      .request("tools/call", { name: "flood", arguments: { bytes: 256 << 20 } })
      .catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toMatch(
      /upstream rough wrote a message longer than max_line_bytes \(1048576 bytes\)/,
    );
    // Generous: the 256 MiB the upstream tried to write must not have been held.
    expect(rss() - before).toBeLessThan(96 << 20);
    // The connection restarts it on the next use.
    await until(() => c.state?.status === "unavailable", "unavailable state");
    expect(c.state).toMatchObject({ reason: expect.stringMatching(/max_line_bytes/) });
    expect((await c.ensure()).status).toBe("ready");
  });

  test("a 20 MiB line is read whole", async () => {
    const c = connect(upstream([ROUGH]));
    const size = 20 << 20;
    const result = (await c.request("tools/call", { name: "big", arguments: { bytes: size } })) as {
      content: { text: string }[];
    };
    expect(result.content[0]!.text.length).toBe(size);
  });
});

describe("an upstream's lists", () => {
  test("a list_changed that arrives during a refresh is followed by one more refresh", async () => {
    const c = connect(upstream([ROUGH]));
    await c.ensure();
    await c.request("tools/call", { name: "grow_twice", arguments: {} });
    // The second change is announced while the refresh that the first one caused is still reading.
    await until(() => toolNames(c.state).includes("grown_2"), "grown_2 in the tool list");
    expect(toolNames(c.state)).toEqual(["big", "flood", "grow_twice", "grown_1", "grown_2"]);
  });

  test("prompts and resources lists answered with -32601 are empty and the upstream is ready", async () => {
    const c = connect(upstream([ROUGH, "--missing-lists"]));
    const state = await c.ensure();
    expect(state).toMatchObject({ status: "ready", prompts: [], resources: [], templates: [] });
    expect(toolNames(state)).toEqual(["big", "flood", "grow_twice"]);
  });

  test("a failing tools/list makes the upstream unavailable, with the reason", async () => {
    const c = connect(upstream([ROUGH, "--fail-tools-list"]));
    const state = await c.ensure();
    expect(state).toMatchObject({
      status: "unavailable",
      reason: expect.stringMatching(/^tools\/list failed: .*tools are broken today/),
    });
  });
});
