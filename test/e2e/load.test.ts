/** 500 sessions leak memory, sessions or processes: open them at once, call through all of them, close them. */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { alive, descendants, FIXTURE, type Served, serve, tempDir } from "../helpers/proc.js";
import { closeSession, openSession, pooled, request } from "../helpers/wire.js";

const SESSIONS = 500;
const CALLS = 5000;
const CONCURRENCY = 64;
const WARMUP = 20;
/** Generous: the heap may keep what it grew to; a leak of 500 sessions' state would still show. */
const RSS_SLACK_MB = 60;

const tmp = tempDir();
const config = tmp.file(
  "packs.yaml",
  `
name: load
upstreams:
  main:
    command: node
    args: ["${FIXTURE}", "--tools", "echo"]
toolsets:
  core:
    tools: [main/echo]
`,
);

let served: Served;
beforeAll(async () => {
  served = await serve([config]);
});
afterAll(async () => {
  await served?.stop("SIGKILL");
  tmp.cleanup();
});

/** Resident memory of a process, in MB (from /proc). */
function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]) / 1024;
}

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

      // 5,000 calls spread over them, 64 in flight.
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
      peak = Math.max(peak, rssMb(pid));
      phases.calls = (Date.now() - t0) / 1000 - phases.open;

      // Close every session.
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
        `elapsed ${elapsed.toFixed(1)} s (open ${phases.open.toFixed(1)}, calls ${phases.calls.toFixed(1)}, close ${phases.close.toFixed(1)}); sessions open at the end: ${reportsSessions ? await healthSessions() : "not reported"}`,
      ].join("\n"),
    );
    expect(problems).toEqual([]);
    expect(errors).toBe(0);
    expect(after).toBeLessThanOrEqual(before + RSS_SLACK_MB);

    // Shutdown: SIGTERM ends the proxy and every process it started.
    const children = descendants(pid);
    expect(children).toEqual(expect.arrayContaining(upstreams));
    expect(await served.stop("SIGTERM")).toBe(0);
    await until(() => children.every((c) => !alive(c)), "the upstream processes to exit").catch(() => {});
    expect(children.filter(alive)).toEqual([]);
  });
});
