/**
 * Per-credential and per-session upstream instances are bounded (SPEC §7.6): an idle instance gives its slot to a
 * newcomer, a busy one never does; a client that starts instances too fast is told to wait; reading /toolsets never
 * takes a slot. Clients come from different loopback addresses, which per-client limits count apart.
 */
import { describe, expect, test } from "vitest";
import { fetchFrom } from "../helpers/from.js";
import { perTest } from "../helpers/harness.js";
import { FIXTURE, rssDuring, type Served } from "../helpers/proc.js";
import { type Fetch, initializeRequest, MCP_HEADERS, openSession, post } from "../helpers/wire.js";

const { cleanups, start: serveYaml } = perTest();

const CONFIG = `
limits: { instances_per_minute: 4 }
upstreams:
  solo: { command: node, args: ["${FIXTURE}", "--tools", "echo,slow"], isolation: per-session, max_instances: 2 }
  cred: { command: node, args: ["${FIXTURE}", "--tools", "echo"], prefix: c_, header_env: { x-api-key: API_KEY }, max_instances: 2 }
toolsets:
  solo: { tools: [solo/echo, solo/slow] }
  cred: { default: false, tools: [cred/echo] }
`;

async function start(): Promise<Served> {
  return serveYaml(CONFIG);
}

const from2 = fetchFrom("127.0.0.2");
const from3 = fetchFrom("127.0.0.3");
const from4 = fetchFrom("127.0.0.4");

const ping = async (url: string, session: string, f: Fetch, headers: Record<string, string> = {}) =>
  (await post(url, { jsonrpc: "2.0", id: 1, method: "ping" }, { session, fetch: f, headers })).status;

/** A slow call in flight in `session` (its answer stream has begun); returns what ends it. */
async function busy(url: string, session: string, f: Fetch): Promise<() => Promise<void>> {
  const abort = new AbortController();
  const res = await f(url, {
    method: "POST",
    headers: { ...MCP_HEADERS, "mcp-session-id": session },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "slow", arguments: { ms: 60_000, steps: 60 }, _meta: { progressToken: 7 } },
    }),
    signal: abort.signal,
  });
  expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
  const end = async () => {
    await post(
      url,
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7 } },
      {
        session,
        fetch: f,
      },
    ).catch(() => {});
    abort.abort();
  };
  cleanups.push(end);
  return end;
}

describe("per-session instances", () => {
  test("a new session takes the slot of an idle session's instance, never of a busy one; with every slot busy it gets 503", async () => {
    const served = await start();
    const url = served.url("only=solo");
    const a = (await openSession(url, { fetch: from2 })).session;
    const b = (await openSession(url, { fetch: from2 })).session;
    await busy(url, a, from2);
    const {
      result: c,
      before,
      peak,
    } = await rssDuring(served.proc.pid!, async () => {
      const { session } = await openSession(url, { fetch: from2 });
      return session;
    });
    // B was idle: it was ended to free its instance's slot. A, busy, was not.
    expect(await ping(url, b, from2)).toBe(404);
    expect(await ping(url, a, from2)).toBe(200);
    expect(await ping(url, c, from2)).toBe(200);
    expect(served.stderr()).toMatch(/an idle instance gave its slot to a new one/);

    await busy(url, c, from2);
    const refused = await post(url, initializeRequest(), { fetch: from3 });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(refused.messages[0]?.error?.message).toMatch(
      /max_instances: 2\) and every one has a request in flight/,
    );
    // Stated figure: a takeover adds under 30 MB to the proxy (the instance is a process of its own).
    expect(peak - before).toBeLessThan(30);
  });

  test("a client that starts new instances too fast gets 429 with Retry-After; another client is not held back", async () => {
    const served = await start();
    const url = served.url("only=solo");
    for (let i = 0; i < 4; i++) await openSession(url, { fetch: from3 });
    const refused = await post(url, initializeRequest(), { fetch: from3 });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refused.messages[0]?.error?.message).toMatch(/limits\.instances_per_minute: 4/);
    await openSession(url, { fetch: from4 });
  });
});

describe("per-credential instances", () => {
  test("GET /toolsets with made-up credentials never takes a slot; a new credential takes an idle one's", async () => {
    const served = await start();
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${served.base}/toolsets?only=cred`, {
        headers: { "x-api-key": `made-up-${i}` },
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    const metrics = await (await fetch(`${served.base}/metrics`)).text();
    expect(metrics).not.toMatch(/toolpacks_upstream_up\{upstream="cred",instance="credential"\} [1-9]/);
    // Both slots are free: two real credentials get theirs without ending anything.
    const url = served.url("only=cred");
    const k1 = (await openSession(url, { fetch: from2, headers: { "x-api-key": "key-one" } })).session;
    await openSession(url, { fetch: from2, headers: { "x-api-key": "key-two" } });
    expect(served.stderr()).not.toMatch(/gave its slot/);
    // A third takes the slot of the least recently used idle one (key-one's), whose session ends.
    await openSession(url, { fetch: from2, headers: { "x-api-key": "key-three" } });
    expect(served.stderr()).toMatch(/an idle instance gave its slot to a new one/);
    expect(await ping(url, k1, from2, { "x-api-key": "key-one" })).toBe(404);
  });
});
