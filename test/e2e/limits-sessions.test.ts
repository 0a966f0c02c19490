/**
 * Sessions, batches and requests in flight are bounded (SPEC §7.6): past each bound the client gets the documented
 * error, and the proxy's memory stays within a stated figure however far past it a client goes. Clients come from
 * different loopback addresses (127.0.0.2, 127.0.0.3 …), which per-client limits count as different clients.
 */
import { describe, expect, test } from "vitest";
import { fetchFrom } from "../helpers/from.js";
import { perTest } from "../helpers/harness.js";
import { FIXTURE, rssDuring, type Served } from "../helpers/proc.js";
import {
  type Fetch,
  initializeRequest,
  MCP_HEADERS,
  openSession,
  pooled,
  post,
  request,
} from "../helpers/wire.js";

const { cleanups, start } = perTest();

const UPSTREAM = `upstreams:\n  main: { command: node, args: ["${FIXTURE}", "--tools", "echo,slow"] }\n`;

const from2 = fetchFrom("127.0.0.2");
const from3 = fetchFrom("127.0.0.3");
const from4 = fetchFrom("127.0.0.4");

async function sessionsOpen(served: Served): Promise<number> {
  return ((await (await fetch(`${served.base}/healthz`)).json()) as { sessions: number }).sessions;
}

const ping = async (served: Served, session: string, f: Fetch) =>
  (await post(served.url(), { jsonrpc: "2.0", id: 1, method: "ping" }, { session, fetch: f })).status;

/** 1,000 initialize requests from one client, 16 at a time: their statuses, and the proxy's RSS meanwhile. */
const initializeFlood = (served: Served, f: Fetch) =>
  rssDuring(served.proc.pid!, () =>
    pooled(1000, 16, async () => (await post(served.url(), initializeRequest(), { fetch: f })).status),
  );

/** Holds a session's GET stream open (the session is then in use); returns what closes it. */
async function holdStream(served: Served, session: string, f: Fetch): Promise<() => void> {
  const abort = new AbortController();
  const res = await f(served.url(), {
    method: "GET",
    headers: { accept: "text/event-stream", "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" },
    signal: abort.signal,
  });
  expect(res.status).toBe(200);
  // Read it (a response nobody holds is collected, and its connection closed with it).
  const reading = res.body?.pipeTo(new WritableStream()).catch(() => {});
  return () => {
    abort.abort();
    void reading;
  };
}

describe("sessions per client", () => {
  test("a client past its session bound gets 503 naming the limit, other clients still open, memory stays bounded", async () => {
    const served = await start(UPSTREAM, ["--max-sessions-per-client", "10"]);
    const mine = await pooled(10, 5, async () => (await openSession(served.url(), { fetch: from2 })).session);
    expect(new Set(mine).size).toBe(10);
    const refused = await post(served.url(), initializeRequest(), { fetch: from2 });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(refused.messages[0]?.error?.code).toBe(-32000);
    expect(refused.messages[0]?.error?.message).toMatch(/limits\.sessions_per_client: 10/);
    // Another client is not affected, and the first one's sessions still serve.
    await openSession(served.url(), { fetch: from3 });
    expect(await ping(served, mine[0]!, from2)).toBe(200);

    // 1,000 more attempts: every one refused, nothing kept for them.
    const { result: statuses, before, peak } = await initializeFlood(served, from2);
    expect(statuses.filter((s) => s !== 503)).toEqual([]);
    expect(await sessionsOpen(served)).toBe(11);
    // Stated figure: the refused flood adds under 40 MB (without the bound it held 1,000 sessions for 30 min).
    expect(peak - before).toBeLessThan(40);
  });
});

describe("sessions in total", () => {
  test("a newcomer past the total closes the least recently used idle session; a flood never holds more than the total", async () => {
    const served = await start(UPSTREAM, ["--max-sessions", "20"]);
    const first = await pooled(
      20,
      1,
      async () => (await openSession(served.url(), { fetch: from2 })).session,
    );
    // s0 is used again (no longer the least recently used); s1 holds its GET stream (in use).
    expect(await ping(served, first[0]!, from2)).toBe(200);
    const close = await holdStream(served, first[1]!, from2);
    cleanups.push(async () => close());

    await openSession(served.url(), { fetch: from3 });
    expect(await ping(served, first[2]!, from2)).toBe(404);
    expect(await ping(served, first[0]!, from2)).toBe(200);
    expect(await ping(served, first[1]!, from2)).toBe(200);
    expect(await sessionsOpen(served)).toBe(20);

    // 1,000 newcomers from another client: each one is served, the total never grows past 20.
    const { result: statuses, before, peak } = await initializeFlood(served, from4);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect(await sessionsOpen(served)).toBe(20);
    // The session holding its stream was never idle, so never closed.
    expect(await ping(served, first[1]!, from2)).toBe(200);
    // Stated figure: 1,000 sessions opened and closed add under 50 MB.
    expect(peak - before).toBeLessThan(50);
  });

  test("when no session is idle a newcomer gets 503 naming the total", async () => {
    const served = await start(UPSTREAM, ["--max-sessions", "3"]);
    for (let i = 0; i < 3; i++) {
      const { session } = await openSession(served.url(), { fetch: from2 });
      const close = await holdStream(served, session, from2);
      cleanups.push(async () => close());
    }
    const refused = await post(served.url(), initializeRequest(), { fetch: from3 });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(refused.messages[0]?.error?.message).toMatch(/limits\.sessions: 3.*none is idle/);
  });
});

describe("batches and requests in flight", () => {
  test("a batch past limits.batch is refused whole with -32600 naming the limit, and a huge one costs bounded memory", async () => {
    const served = await start(UPSTREAM);
    const { session } = await openSession(served.url());
    const pings = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ jsonrpc: "2.0", id: i + 1, method: "ping" }));
    const ok = await post(served.url(), pings(100), { session });
    expect(ok.status).toBe(200);
    expect(ok.messages).toHaveLength(100);
    const over = await post(served.url(), pings(101), { session });
    expect(over.status).toBe(400);
    expect(over.messages[0]?.error?.code).toBe(-32600);
    expect(over.messages[0]?.error?.message).toMatch(/at most 100 messages \(limits\.batch\)/);

    // The review's batch: 38,000 calls in one 3.9 MB POST (it took 411 MB and delayed others by 20 s).
    const calls = Array.from({ length: 38_000 }, (_, i) => ({
      jsonrpc: "2.0",
      id: i + 1,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "x" } },
    }));
    const { result, before, peak } = await rssDuring(served.proc.pid!, () =>
      post(served.url(), calls, { session }),
    );
    expect(result.status).toBe(400);
    expect(result.messages[0]?.error?.message).toMatch(/limits\.batch/);
    // Stated figure: reading and refusing it adds under 60 MB.
    expect(peak - before).toBeLessThan(60);
    const { answer } = await request(served.url(), session, 1, "tools/call", {
      name: "echo",
      arguments: { text: "still here" },
    });
    expect(answer.result).toEqual({ content: [{ type: "text", text: "still here" }] });
  });

  test("a session past limits.requests_per_session gets 429 until its requests are answered", async () => {
    const served = await start(`${UPSTREAM}limits: { requests_per_session: 5 }\n`);
    const { session } = await openSession(served.url());
    const slow = (id: number) => ({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "slow", arguments: { ms: 30_000, steps: 30 }, _meta: { progressToken: id } },
    });
    // Five slow calls in one batch: its answer turns into a stream at the first progress, so they are in flight.
    const abort = new AbortController();
    const batch = await fetch(served.url(), {
      method: "POST",
      headers: { ...MCP_HEADERS, "mcp-session-id": session },
      body: JSON.stringify([1, 2, 3, 4, 5].map(slow)),
      signal: abort.signal,
    });
    cleanups.push(async () => abort.abort());
    expect(batch.headers.get("content-type")).toMatch(/text\/event-stream/);
    const sixth = await post(served.url(), slow(6), { session });
    expect(sixth.status).toBe(429);
    expect(sixth.messages[0]?.error?.message).toMatch(/5 requests in flight.*limits\.requests_per_session/);
    const cancel = (id: number) =>
      post(
        served.url(),
        { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id } },
        { session },
      );
    for (const id of [1, 2, 3, 4, 5]) await cancel(id);
    await batch.text();
    expect(await ping(served, session, fetch)).toBe(200);
  });
});
