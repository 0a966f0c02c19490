/** Edges a review found: settling a call while its request is still being sent, batches, closing mid-call, secrets. */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, test } from "vitest";
import { FIXTURE, httpClient, ROOT, type Served, serve, tempDir } from "../helpers/proc.js";
import { initializeRequest } from "../helpers/wire.js";

const tmp = tempDir();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((f) => f().catch(() => {})));
});
afterAll(() => tmp.cleanup());

const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
async function session(served: Served): Promise<Record<string, string>> {
  const r = await fetch(served.url(), {
    method: "POST",
    headers: HEADERS,
    body: JSON.stringify(initializeRequest()),
  });
  await r.text();
  return {
    ...HEADERS,
    "mcp-session-id": r.headers.get("mcp-session-id")!,
    "mcp-protocol-version": "2025-11-25",
  };
}

async function start(yaml: string, env: Record<string, string> = {}): Promise<Served> {
  const served = await serve([tmp.file(`p-${Math.random().toString(36).slice(2)}.yaml`, yaml)], env);
  cleanups.push(() => served.stop());
  return served;
}

describe("edges", () => {
  test("a timeout while an HTTP upstream is still answering the request does not crash the proxy", async () => {
    const up: ChildProcess = spawn(
      process.execPath,
      [join(ROOT, "test/fixtures/http-echo-server.mjs"), "0", "--json"],
      {
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    cleanups.push(async () => up.kill("SIGKILL"));
    const port = await new Promise<number>((ok) => {
      let err = "";
      up.stderr!.on("data", (c: Buffer) => {
        err += c.toString();
        const m = /:(\d+)\/mcp/.exec(err);
        if (m) ok(Number(m[1]));
      });
    });
    const served = await start(
      `upstreams:\n  web: { url: "http://127.0.0.1:${port}/mcp", call_timeout: 0.5 }\n`,
    );
    const c = await httpClient(served.url());
    cleanups.push(() => c.close());
    const err = (await c
      .callTool({ name: "sleep", arguments: { ms: 2000 } })
      .catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/timed out after 500 ms/);
    await new Promise((r) => setTimeout(r, 2000));
    expect((await fetch(`${served.base}/healthz`)).status).toBe(200);
    expect(served.proc.exitCode).toBeNull();
  });

  test("a batch's earlier answer is kept when a later request switches the response to SSE", async () => {
    const served = await start(
      `upstreams:\n  main: { command: node, args: ["${FIXTURE}", "--tools", "echo,slow"] }\n`,
    );
    const headers = await session(served);
    const r = await fetch(served.url(), {
      method: "POST",
      headers,
      body: JSON.stringify([
        { jsonrpc: "2.0", id: 1, method: "tools/list" },
        {
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "slow", arguments: { ms: 200, steps: 2 }, _meta: { progressToken: "p" } },
        },
      ]),
    });
    const text = await r.text();
    expect(r.headers.get("content-type")).toMatch(/event-stream/);
    const ids = text
      .split("\n")
      .filter((l) => l.startsWith("data:"))
      .map((l) => JSON.parse(l.slice(5)) as { id?: number })
      .filter((m) => m.id !== undefined)
      .map((m) => m.id);
    expect(ids.sort()).toEqual([1, 2]);
  });

  test("a session closed during a call answers the client's pending call with an error", async () => {
    const served = await start(
      `upstreams:\n  main: { command: node, args: ["${FIXTURE}", "--tools", "slow"] }\n`,
    );
    const headers = await session(served);
    const pending = fetch(served.url(), {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params: { name: "slow", arguments: { ms: 20_000 } },
      }),
    }).then((r) => r.text());
    await new Promise((r) => setTimeout(r, 300));
    expect((await fetch(served.url(), { method: "DELETE", headers })).status).toBe(200);
    const body = await pending;
    expect(body).toMatch(/"id":7/);
    expect(body).toMatch(/Session closed before the answer/);
  });

  test("an upstream that echoes a configured secret on stderr never leaks it into /toolsets or the log", async () => {
    const served = await start(
      `upstreams:\n  leaky: { command: node, args: ["-e", "console.error('bad key ' + process.argv[1]); process.exit(3)", "\${LEAKY_KEY}"] }\n`,
      { LEAKY_KEY: "sk-live-abcdef123456" },
    );
    const body = await (await fetch(`${served.base}/toolsets`)).text();
    expect(body).toContain("upstream-unavailable");
    expect(body).not.toContain("sk-live-abcdef123456");
    expect(body).toContain("${LEAKY_KEY}");
    expect(served.stderr()).not.toContain("sk-live-abcdef123456");
  });
});
