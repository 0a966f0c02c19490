/**
 * 500 sessions leak memory, sessions or processes: open them at once, call through all of them, close them; while
 * an abusive client (another address) floods sessions, sends batches, stalls an SSE reader and makes up
 * credentials, every honest call still succeeds.
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { closeAgents, fetchFrom } from "../helpers/from.js";
import { alive, descendants, FIXTURE, rssMb, type Served, serve, tempDir } from "../helpers/proc.js";
import { closeSession, initializeRequest, openSession, pooled, post, request } from "../helpers/wire.js";

const SESSIONS = 500;
const CALLS = 5000;
const CONCURRENCY = 64;
const WARMUP = 20;
/**
 * Generous: the heap keeps what it grew to (measured +55 and +64 MB after the honest 500 sessions beside the
 * abuser's 600 held and 800 flooded ones); a leak of every session's state and upstream buffers would still show.
 */
const RSS_SLACK_MB = 80;

const tmp = tempDir();
const config = tmp.file(
  "packs.yaml",
  `
name: load
limits: { sessions_per_client: 600, stalled_reader_timeout: 3 }
upstreams:
  main:
    command: node
    args: ["${FIXTURE}", "--tools", "echo", "--progress-flood"]
  cred:
    command: node
    args: ["${FIXTURE}", "--tools", "echo"]
    prefix: c_
    header_env: { x-api-key: API_KEY }
    max_instances: 4
toolsets:
  core:
    tools: [main/echo]
  abuse:
    default: false
    tools: [main/progress_flood]
  cred:
    default: false
    tools: [cred/echo]
`,
);

let served: Served;
beforeAll(async () => {
  served = await serve([config]);
});
afterAll(async () => {
  await served?.stop("SIGKILL");
  await closeAgents();
  tmp.cleanup();
});

/** The session table's size as /healthz reports it; undefined if it does not. */
async function healthSessions(): Promise<number | undefined> {
  const body = (await (await fetch(`${served.base}/healthz`)).json()) as { sessions?: unknown };
  return typeof body.sessions === "number" ? body.sessions : undefined;
}

const openedInLog = () => served.stderr().match(/session opened/g)?.length ?? 0;

async function until(check: () => boolean | Promise<boolean>, what: string, waitMs = 15_000): Promise<void> {
  const end = Date.now() + waitMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`gave up waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("under load", () => {
  test("500 sessions leak no memory, sessions or processes", async () => {
    const url = served.url();
    const pid = served.proc.pid!;

    // Warm up: the upstream is started, the code paths are compiled, then everything is closed again.
    const warm = await pooled(WARMUP, WARMUP, async (i) => {
      const { session } = await openSession(url);
      await request(url, session, i, "tools/call", { name: "echo", arguments: { text: "warm" } });
      return session;
    });
    await pooled(WARMUP, WARMUP, (i) => closeSession(url, warm[i]!));
    const reportsSessions = (await healthSessions()) !== undefined;
    if (!reportsSessions)
      console.warn("GET /healthz does not report the session count; falling back to the log");
    else expect(await healthSessions()).toBe(0);
    const upstreams = descendants(pid);
    expect(upstreams.length).toBeGreaterThan(0);

    const started = Date.now();
    const before = rssMb(pid);
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssMb(pid));
    }, 50);

    const phases = { open: 0, calls: 0, close: 0 };
    let abused: Abused | undefined;
    let errors = 0;
    const problems: string[] = [];
    const fail = (what: string) => {
      errors++;
      if (problems.length < 5) problems.push(what);
    };
    try {
      // 500 sessions, all open at once.
      const t0 = Date.now();
      const sessions = await pooled(SESSIONS, CONCURRENCY, async () => (await openSession(url)).session);
      expect(new Set(sessions).size).toBe(SESSIONS);
      const open = reportsSessions ? await healthSessions() : openedInLog() - WARMUP;
      expect(open).toBe(SESSIONS);
      peak = Math.max(peak, rssMb(pid));
      phases.open = (Date.now() - t0) / 1000;

      // 5,000 calls spread over them, 64 in flight, while the abusive client does its worst.
      const abusing = abuse(url);
      await pooled(CALLS, CONCURRENCY, async (i) => {
        try {
          const { answer } = await request(url, sessions[i % SESSIONS]!, i, "tools/call", {
            name: "echo",
            arguments: { text: `call ${i}` },
          });
          const text = (answer.result as { content?: { text?: string }[] } | undefined)?.content?.[0]?.text;
          if (text !== `call ${i}`) fail(`call ${i}: ${JSON.stringify(answer)}`);
        } catch (err) {
          fail(`call ${i}: ${(err as Error).message}`);
        }
      });
      abused = await abusing;
      peak = Math.max(peak, rssMb(pid));
      phases.calls = (Date.now() - t0) / 1000 - phases.open;

      // The abuser leaves (it ends what it holds), then every honest session is closed.
      await pooled(abused.sessions.length, CONCURRENCY, (i) =>
        closeSession(url, abused!.sessions[i]!.id, {
          fetch: abuser,
          headers: abused!.sessions[i]!.headers ?? {},
        }),
      );
      const closed = await pooled(SESSIONS, CONCURRENCY, (i) => closeSession(url, sessions[i]!));
      expect(closed.filter((s) => s !== 200)).toEqual([]);
      phases.close = (Date.now() - t0) / 1000 - phases.open - phases.calls;
      // A closed session is gone, not merely idle.
      const gone = await request(url, sessions[0]!, 0, "ping").catch((e: Error) => e.message);
      expect(String(gone)).toMatch(/404|Session not found/);
    } finally {
      clearInterval(sampler);
    }
    const elapsed = (Date.now() - started) / 1000;
    if (reportsSessions) expect(await healthSessions()).toBe(0);

    // Memory: back near where it started (given the heap a moment to shrink, if it needs one).
    let after = rssMb(pid);
    await until(
      () => {
        after = rssMb(pid);
        return after <= before + RSS_SLACK_MB;
      },
      `RSS back under ${(before + RSS_SLACK_MB).toFixed(0)} MB (now ${after.toFixed(0)} MB)`,
    ).catch(() => {});
    console.log(
      [
        `load: ${SESSIONS} sessions, ${CALLS} calls (${CONCURRENCY} in flight), ${errors} errors`,
        `proxy RSS before ${before.toFixed(1)} MB, peak ${peak.toFixed(1)} MB, after ${after.toFixed(1)} MB`,
        `abuse: ${JSON.stringify({ ...abused, sessions: abused?.sessions.length })}`,
        `elapsed ${elapsed.toFixed(1)} s (open ${phases.open.toFixed(1)}, calls ${phases.calls.toFixed(1)}, close ${phases.close.toFixed(1)}); sessions open at the end: ${reportsSessions ? await healthSessions() : "not reported"}`,
      ].join("\n"),
    );
    expect(problems).toEqual([]);
    expect(errors).toBe(0);
    // The abuser got the documented answers: its sessions past its bound 503, its long batch 400, its fake
    // credentials served or told to wait, and its stalled reader cut off.
    expect(Object.keys(abused?.flood ?? {}).sort()).toEqual(["200", "503"]);
    expect(abused?.held).toBeLessThanOrEqual(600);
    expect(abused?.batches).toEqual([200, 200, 200, 200, 200, 400]);
    expect(Object.keys(abused?.credentials ?? {}).every((s) => ["200", "429", "503"].includes(s))).toBe(true);
    expect(abused?.stalledClosed).toBe(true);
    expect(after).toBeLessThanOrEqual(before + RSS_SLACK_MB);

    // Shutdown: SIGTERM ends the proxy and every process it started.
    const children = descendants(pid);
    expect(children).toEqual(expect.arrayContaining(upstreams));
    expect(await served.stop("SIGTERM")).toBe(0);
    await until(() => children.every((c) => !alive(c)), "the upstream processes to exit").catch(() => {});
    expect(children.filter(alive)).toEqual([]);
  }, 240_000);
});

const FLOOD = 800;
const abuser = fetchFrom("127.0.0.2");

interface Held {
  id: string;
  headers?: Record<string, string>;
}

interface Abused {
  flood: Record<number, number>;
  /** Sessions the abuser held at most (its bound is 600). */
  held: number;
  /** Its sessions, to end when it leaves. */
  sessions: Held[];
  batches: number[];
  credentials: Record<number, number>;
  stalledClosed: boolean;
}

const tally = (xs: number[]) => {
  const out: Record<number, number> = {};
  for (const x of xs) out[x] = (out[x] ?? 0) + 1;
  return out;
};

/** One client (127.0.0.2) doing what the security review did, beside the honest ones. */
async function abuse(url: string): Promise<Abused> {
  // A reader that never reads while its call floods progress.
  const { session: stalled } = await openSession(`${url}?abuse`, { fetch: abuser });
  const kept: Held[] = [{ id: stalled }];
  const u = new URL(url);
  const socket = connect({ host: u.hostname, port: Number(u.port), localAddress: "127.0.0.2" });
  socket.on("error", () => {});
  socket.pause();
  const flood = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: {
      name: "progress_flood",
      arguments: { count: 20_000, bytes: 4096 },
      _meta: { progressToken: 1 },
    },
  });
  socket.write(
    `POST ${u.pathname}?abuse HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: ${stalled}\r\nMcp-Protocol-Version: 2025-11-25\r\nContent-Length: ${Buffer.byteLength(flood)}\r\n\r\n${flood}`,
  );
  const [sessions, batches, credentials] = await Promise.all([
    // A sessions flood past its own bound.
    pooled(FLOOD, 8, async () => {
      const r = await post(url, initializeRequest(), { fetch: abuser });
      return { status: r.status, session: r.headers.get("mcp-session-id") };
    }),
    // Max-length batches, and one longer.
    (async () => {
      const { session } = await openSession(url, { fetch: abuser });
      const out: number[] = [];
      kept.push({ id: session });
      for (const n of [100, 100, 100, 100, 100, 101]) {
        const calls = Array.from({ length: n }, (_, i) => ({
          jsonrpc: "2.0",
          id: i + 1,
          method: "tools/call",
          params: { name: "echo", arguments: { text: "b" } },
        }));
        out.push((await post(url, calls, { session, fetch: abuser })).status);
      }
      return out;
    })(),
    // Made-up credentials: /toolsets reads, and sessions that each want an instance of their own.
    pooled(40, 4, async (i) => {
      const headers = { "x-api-key": `made-up-${i}` };
      if (i % 2 === 0) {
        const res = await abuser(`${u.origin}/toolsets?only=cred`, { method: "GET", headers });
        await res.arrayBuffer();
        return res.status;
      }
      const r = await post(`${url}?only=cred`, initializeRequest(), { fetch: abuser, headers });
      const id = r.headers.get("mcp-session-id");
      if (id) kept.push({ id, headers });
      return r.status;
    }),
  ]);
  const stalledClosed = await new Promise<boolean>((resolve) => {
    const end = Date.now() + 60_000;
    const check = () => {
      if (/read nothing of its response/.test(served.stderr())) resolve(true);
      else if (Date.now() > end) resolve(false);
      else setTimeout(check, 100);
    };
    check();
  });
  await post(
    url,
    { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } },
    {
      session: stalled,
      fetch: abuser,
    },
  );
  socket.destroy();
  const held = ((await (await fetch(`${u.origin}/healthz`)).json()) as { sessions: number }).sessions;
  return {
    flood: tally(sessions.map((r) => r.status)),
    held: held - SESSIONS,
    sessions: [...kept, ...sessions.flatMap((r) => (r.session ? [{ id: r.session }] : []))],
    batches,
    credentials: tally(credentials),
    stalledClosed,
  };
}
