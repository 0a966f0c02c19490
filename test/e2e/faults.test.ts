/** One bad upstream, a hung call, a dropped HTTP upstream or a bad reload must not take the gateway down. */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, afterEach, describe, expect, test } from "vitest";
import {
  FIXTURE,
  httpClient,
  ROOT,
  type Served,
  serve,
  startListening,
  tempDir,
  toolNames,
} from "../helpers/proc.js";
import { rawStatus } from "../helpers/wire.js";

const tmp = tempDir();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((f) => f().catch(() => {})));
});
afterAll(() => tmp.cleanup());

async function start(yaml: string, args: string[] = [], env: Record<string, string> = {}): Promise<Served> {
  const file = tmp.file(`packs-${Math.random().toString(36).slice(2)}.yaml`, yaml);
  const served = await serve([...args, file], env);
  cleanups.push(() => served.stop());
  return served;
}
async function client(served: Served, query = "", headers?: Record<string, string>): Promise<Client> {
  const c = await httpClient(served.url(query), {}, headers);
  cleanups.push(() => c.close());
  return c;
}
const events = (file: string) =>
  existsSync(file)
    ? readFileSync(file, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { event: string; pid: number; tool?: string })
    : [];
async function until<T>(f: () => Promise<T | undefined> | T | undefined, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error("condition not reached");
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("a stdio upstream that dies", () => {
  test("its in-flight calls fail, the other upstream's session does not notice, and the next use restarts it", async () => {
    const ev = join(tmp.dir, "crash.events");
    const served = await start(`
upstreams:
  main: { command: node, args: ["${FIXTURE}", "--crash-on", "fail", "--events-file", "${ev}"] }
  other: { command: node, args: ["${FIXTURE}", "--name", "other", "--prefix-tools", "o_", "--tools", "echo"] }
toolsets:
  mainpack: { tools: [main/echo, main/slow, main/fail] }
  otherpack: { tools: [other/o_echo] }
`);
    const a = await client(served);
    const b = await client(served);
    const slow = a.callTool({ name: "slow", arguments: { ms: 20_000 } }).catch((e: Error) => e);
    await until(() => events(ev).some((e) => e.event === "call" && e.tool === "slow"));
    const crash = await a.callTool({ name: "fail", arguments: {} }).catch((e: Error) => e);
    expect(crash).toBeInstanceOf(Error);
    expect((crash as Error).message).toMatch(/upstream main/);
    const inflight = await slow;
    expect(inflight).toBeInstanceOf(Error);
    expect((inflight as Error).message).toMatch(/upstream main.*Connection closed/);
    // The other upstream never noticed.
    expect(await b.callTool({ name: "o_echo", arguments: { text: "still here" } })).toMatchObject({
      content: [{ text: "still here" }],
    });
    // While it is down, /toolsets says so (a report does not restart it).
    const report = (await (await fetch(`${served.base}/toolsets`)).json()) as {
      unavailable: { name: string; reason: string; detail: string }[];
    };
    expect(report.unavailable).toEqual([
      expect.objectContaining({
        name: "mainpack",
        reason: "upstream-unavailable",
        detail: expect.stringContaining("main"),
      }),
    ]);
    // The next use restarts it, with its inventory read afresh.
    const firstPid = events(ev).find((e) => e.event === "start")!.pid;
    expect(await a.callTool({ name: "echo", arguments: { text: "back" } })).toMatchObject({
      content: [{ text: "back" }],
    });
    const starts = events(ev).filter((e) => e.event === "start");
    expect(starts).toHaveLength(2);
    expect(starts[1]!.pid).not.toBe(firstPid);
    expect(events(ev).filter((e) => e.event === "list").length).toBeGreaterThanOrEqual(2);
    const fresh = await client(served);
    expect(await toolNames(fresh)).toEqual(["echo", "slow", "fail", "o_echo", "list_server_toolsets"]);
  });

  test("a second crash backs off before restarting, and says when", async () => {
    const ev = join(tmp.dir, "crash2.events");
    const served = await start(`
upstreams:
  main: { command: node, args: ["${FIXTURE}", "--crash-on", "fail", "--events-file", "${ev}"] }
`);
    const a = await client(served);
    await a.callTool({ name: "fail", arguments: {} }).catch(() => {});
    await a.callTool({ name: "echo", arguments: { text: "1" } });
    await a.callTool({ name: "fail", arguments: {} }).catch(() => {});
    const refused = await a.callTool({ name: "echo", arguments: { text: "2" } }).catch((e: Error) => e);
    expect((refused as Error).message).toMatch(/upstream main.*next restart in \d+ s/);
    // After the backoff it comes back.
    await until(async () => {
      const r = await a.callTool({ name: "echo", arguments: { text: "3" } }).catch(() => undefined);
      return r?.content;
    });
    expect(events(ev).filter((e) => e.event === "start")).toHaveLength(3);
  });
});

describe("timeouts", () => {
  test("a hung call times out and never blocks the other upstreams", async () => {
    const ev = join(tmp.dir, "slow.events");
    const served = await start(`
upstreams:
  main: { command: node, args: ["${FIXTURE}", "--events-file", "${ev}"], call_timeout: 0.5 }
  other: { command: node, args: ["${FIXTURE}", "--prefix-tools", "o_", "--tools", "echo"] }
`);
    const c = await client(served);
    const hung = c
      .callTool({ name: "slow", arguments: { ms: 30_000 } })
      .catch((e: Error & { code?: number }) => e);
    expect(await c.callTool({ name: "o_echo", arguments: { text: "free" } })).toMatchObject({
      content: [{ text: "free" }],
    });
    const err = (await hung) as Error & { code?: number };
    expect(err.code).toBe(-32001);
    expect(err.message).toMatch(/upstream main: timed out after 500 ms/);
    await until(() => events(ev).some((e) => e.event === "cancelled"));
  });

  test("an upstream that never initializes does not block the gateway", async () => {
    const served = await start(`
upstreams:
  mute: { command: node, args: ["-e", "setInterval(() => {}, 1000)"], connect_timeout: 0.5 }
  main: { command: node, args: ["${FIXTURE}", "--tools", "echo"] }
`);
    const c = await client(served);
    expect(await toolNames(c)).toEqual(["echo", "list_server_toolsets"]);
    const report = (await (await fetch(`${served.base}/toolsets`)).json()) as {
      unavailable: { name: string; detail: string }[];
    };
    expect(report.unavailable).toEqual([
      expect.objectContaining({ name: "mute", detail: expect.stringMatching(/timed out/) }),
    ]);
  });
});

describe("an HTTP upstream", () => {
  async function startHttpUpstream(port = 0): Promise<{ proc: ChildProcess; port: number }> {
    const { proc, listening } = startListening([
      join(ROOT, "test/fixtures/http-echo-server.mjs"),
      String(port),
    ]);
    cleanups.push(async () => proc.kill("SIGKILL"));
    return { proc, port: await listening };
  }

  test("an upstream that restarts (forgetting our session) serves later calls again", async () => {
    const first = await startHttpUpstream();
    const served = await start(`upstreams:\n  web: { url: "http://127.0.0.1:${first.port}/mcp" }\n`);
    const c = await client(served);
    const before = (await c.callTool({ name: "whoami", arguments: {} })).structuredContent as { pid: number };
    first.proc.kill("SIGKILL");
    await new Promise((r) => first.proc.once("exit", r));
    const down = await c.callTool({ name: "whoami", arguments: {} }).catch((e: Error) => e);
    expect(down).toBeInstanceOf(Error);
    const second = await startHttpUpstream(first.port);
    const after = await until(async () => {
      const r = await c.callTool({ name: "whoami", arguments: {} }).catch(() => undefined);
      return r?.structuredContent as { pid: number } | undefined;
    });
    expect(after.pid).toBe(second.proc.pid);
    expect(after.pid).not.toBe(before.pid);
  });
});

describe("bad input and a bad reload", () => {
  test("arguments that do not fit the schema are refused with -32602 naming the problem, unless opted out", async () => {
    const served = await start(`
upstreams:
  strict: { command: node, args: ["${FIXTURE}", "--tools", "echo"] }
  loose: { command: node, args: ["${FIXTURE}", "--tools", "echo", "--prefix-tools", "l_"], validate_arguments: false }
`);
    const c = await client(served);
    const err = (await c
      .callTool({ name: "echo", arguments: { text: 5 } })
      .catch((e: unknown) => e)) as Error & { code: number };
    expect(err.code).toBe(-32602);
    expect(err.message).toMatch(/Invalid arguments for tool echo: text must be string/);
    const missing = (await c.callTool({ name: "echo", arguments: {} }).catch((e: unknown) => e)) as Error;
    expect(missing.message).toMatch(/text is required/);
    // Opted out: the upstream decides (here the fixture's SDK refuses the result its echo builds from a number).
    const forwarded = (await c
      .callTool({ name: "l_echo", arguments: { text: 5 } })
      .catch((e: unknown) => e)) as Error;
    expect(forwarded.message).not.toMatch(/Invalid arguments for tool/);
    expect(forwarded.message).toMatch(/Invalid tools\/call result/);
  });

  test("an invalid reload keeps the valid config, and a valid one keeps live sessions", async () => {
    const file = tmp.file(
      "reload.yaml",
      `upstreams:\n  main: { command: node, args: ["${FIXTURE}"] }\ntoolsets:\n  core: { tools: [main/echo] }\n`,
    );
    const served = await serve(["--watch", file]);
    cleanups.push(() => served.stop());
    const live = await httpClient(served.url());
    cleanups.push(() => live.close());
    let changed = 0;
    live.setNotificationHandler(
      (await import("@modelcontextprotocol/sdk/types.js")).ToolListChangedNotificationSchema,
      () => {
        changed++;
      },
    );
    expect(await toolNames(live)).toEqual(["echo", "list_server_toolsets"]);
    writeFileSync(file, "upstreams:\n  main: { comand: node }\n");
    await until(() => served.stderr().includes("reload refused"));
    expect(served.stderr()).toMatch(/reload\.yaml:2:\d+: unknown key "comand"/);
    expect(await toolNames(await client(served))).toEqual(["echo", "list_server_toolsets"]);
    expect(await live.callTool({ name: "echo", arguments: { text: "ok" } })).toMatchObject({
      content: [{ text: "ok" }],
    });
    writeFileSync(
      file,
      `upstreams:\n  main: { command: node, args: ["${FIXTURE}"] }\ntoolsets:\n  core: { tools: [main/echo, main/add] }\n`,
    );
    await until(() => served.stderr().includes("config reloaded"));
    expect(await toolNames(await client(served))).toEqual(["echo", "add", "list_server_toolsets"]);
    await until(() => changed > 0);
    expect(await toolNames(live)).toEqual(["echo", "add", "list_server_toolsets"]);
  });
});

describe("security", () => {
  test("the MCP path and /toolsets need a token, and /healthz is open", async () => {
    const served = await start(
      `auth: { tokens: ["\${GW_TOKEN}"] }\nupstreams:\n  main: { command: node, args: ["${FIXTURE}", "--tools", "echo"] }\n`,
      [],
      {
        GW_TOKEN: "correct-horse-battery",
      },
    );
    expect((await fetch(`${served.base}/healthz`)).status).toBe(200);
    const none = await fetch(`${served.base}/toolsets`);
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Bearer/);
    const wrong = await fetch(`${served.base}/toolsets`, {
      headers: { authorization: "Bearer correct-horse-batterz" },
    });
    expect(wrong.status).toBe(401);
    await expect(httpClient(served.url())).rejects.toThrow();
    const ok = await client(served, "", { authorization: "Bearer correct-horse-battery" });
    expect(await toolNames(ok)).toEqual(["echo", "list_server_toolsets"]);
  });

  test("a forged Host or Origin is refused (DNS rebinding)", async () => {
    const served = await start(
      `upstreams:\n  main: { command: node, args: ["${FIXTURE}", "--tools", "echo"] }\n`,
    );
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "x", version: "1" } },
    };
    const post = (headers: Record<string, string>) => rawStatus(served.url(), headers, init);
    expect(await post({ host: "evil.example.com" })).toBe(403);
    expect(await post({ host: u(served), origin: "http://evil.example.com" })).toBe(403);
    expect(await post({ host: u(served), origin: `http://${u(served)}` })).toBe(200);
  });

  test("clients with different credentials never share one upstream session, and a header never leaks to another upstream", async () => {
    const web = spawn(process.execPath, [join(ROOT, "test/fixtures/http-echo-server.mjs"), "0"], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    cleanups.push(async () => web.kill("SIGKILL"));
    const port = await new Promise<number>((ok) => {
      let err = "";
      web.stderr!.on("data", (c: Buffer) => {
        err += c.toString();
        const m = /:(\d+)\/mcp/.exec(err);
        if (m) ok(Number(m[1]));
      });
    });
    const served = await start(`
upstreams:
  gh: { url: "http://127.0.0.1:${port}/mcp", forward_headers: [x-api-key] }
  other: { url: "http://127.0.0.1:${port}/mcp", prefix: "o_" }
toolsets:
  github: { tools: [gh/whoami] }
  plain: { tools: [other/whoami] }
`);
    const a = await client(served, "", { "x-api-key": "key-of-alice" });
    const b = await client(served, "", { "x-api-key": "key-of-bob" });
    const seenA = (await a.callTool({ name: "whoami", arguments: {} })).structuredContent as Record<
      string,
      unknown
    >;
    const seenB = (await b.callTool({ name: "whoami", arguments: {} })).structuredContent as Record<
      string,
      unknown
    >;
    expect(seenA["x-api-key"]).toBe("key-of-alice");
    expect(seenB["x-api-key"]).toBe("key-of-bob");
    // A session id alone does not carry Alice's credential to someone sending another one.
    const sid = (a.transport as unknown as { sessionId: string }).sessionId;
    const borrowed = await fetch(served.url(), {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": sid,
        "x-api-key": "key-of-mallory",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 99,
        method: "tools/call",
        params: { name: "whoami", arguments: {} },
      }),
    });
    expect(borrowed.status).toBe(403);
    const other = (await a.callTool({ name: "o_whoami", arguments: {} })).structuredContent as Record<
      string,
      unknown
    >;
    expect(other["x-api-key"]).toBeNull();
    const report = (await (await fetch(`${served.base}/toolsets`)).json()) as {
      toolsets: { name: string; headers?: string[] }[];
    };
    expect(report.toolsets.find((t) => t.name === "github")?.headers).toEqual(["x-api-key"]);
    expect(report.toolsets.find((t) => t.name === "plain")?.headers).toBeUndefined();
  });

  test("a stdio upstream's per-credential processes never mix their environments", async () => {
    const served = await start(`
upstreams:
  every: { command: mcp-server-everything, header_env: { x-api-key: API_KEY } }
toolsets:
  env: { tools: [every/get-env] }
`);
    const env = async (key: string) => {
      const c = await client(served, "", { "x-api-key": key });
      const r = await c.callTool({ name: "get-env", arguments: {} });
      return JSON.stringify(r.content);
    };
    const alice = await env("alice-key-1");
    const bob = await env("bob-key-22");
    expect(alice).toContain("alice-key-1");
    expect(alice).not.toContain("bob-key-22");
    expect(bob).toContain("bob-key-22");
    expect(bob).not.toContain("alice-key-1");
  });

  test("isolation: per-session gives each user its own process, and refuses past its cap naming it", async () => {
    const ev = join(tmp.dir, "iso.events");
    const served = await start(`
upstreams:
  solo: { command: node, args: ["${FIXTURE}", "--tools", "echo", "--events-file", "${ev}"], isolation: per-session, max_instances: 2 }
`);
    const a = await client(served);
    const b = await client(served);
    await a.callTool({ name: "echo", arguments: { text: "from-a" } });
    await b.callTool({ name: "echo", arguments: { text: "from-b" } });
    const calls = events(ev).filter((e) => e.event === "call");
    expect(calls).toHaveLength(2);
    expect(calls[0]!.pid).not.toBe(calls[1]!.pid);
    // At the cap, a newcomer takes the slot of the least recently used idle instance (a's): that process
    // exits and its session ends, so no more than two ever run (SPEC §7.6; a busy one never gives its slot,
    // see limits-instances.test.ts).
    const c = await client(served);
    expect(await c.callTool({ name: "echo", arguments: { text: "from-c" } })).toMatchObject({
      content: [{ text: "from-c" }],
    });
    await until(() => events(ev).some((e) => e.event === "exit"));
    const exited = events(ev).filter((e) => e.event === "exit");
    expect(exited.map((e) => e.pid)).toEqual([calls[0]!.pid]);
    const third = events(ev).filter((e) => e.event === "call")[2]!;
    expect([calls[0]!.pid, calls[1]!.pid]).not.toContain(third.pid);
    expect(
      await a.callTool({ name: "echo", arguments: { text: "again" } }).catch((e: Error) => e),
    ).toBeInstanceOf(Error);
  });
});

function u(served: Served): string {
  return new URL(served.base).host;
}
