/**
 * Captured values are counted by what the process really holds: ten sessions that each fill their budget with
 * structured results stay within `state.max_total_bytes` together, and the proxy's RSS grows by about that.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { FIXTURE, type Served, serve, tempDir } from "../helpers/proc.js";
import { openSession, pooled, request } from "../helpers/wire.js";

const MiB = 1024 * 1024;
const SESSION_BUDGET = 3 * MiB;
const TOTAL_BUDGET = 12 * MiB;
/** The stated figure: growth of RSS past the values' own budget (heap growth, buffers, garbage not yet collected). */
const OVERHEAD = 96 * MiB;
const ROWS = 4000;
const CALLS = 12;

const tmp = tempDir();
let served: Served;

const rss = (pid: number) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m![1]) * 1024;
};

beforeAll(async () => {
  const config = tmp.file(
    "packs.yaml",
    `state: { max_session_bytes: ${SESSION_BUDGET}, max_total_bytes: ${TOTAL_BUDGET} }
upstreams:
  data: { command: node, args: ["${FIXTURE}", "--tools", "echo", "--big"] }
toolsets:
  rows:
    capture: { over_bytes: 16384 }
    tools: [data/big, data/echo]
`,
  );
  served = await serve([config]);
});
afterAll(async () => {
  await served?.stop();
  tmp.cleanup();
});

describe("captured values and memory", () => {
  test("ten sessions each filling their budget stay within max_total_bytes, and RSS grows by about that much", async () => {
    const url = served.url();
    // Warm up: the upstream, the session path and one capture, so that the baseline holds the code's own memory.
    const warm = await openSession(url);
    await request(url, warm.session, 1, "tools/call", {
      name: "big",
      arguments: { rows: ROWS, tag: "warm" },
    });
    await request(url, warm.session, 2, "tools/call", { name: "echo", arguments: { text: "x" } });
    const before = rss(served.proc.pid!);

    const sessions = await pooled(10, 10, async () => (await openSession(url)).session);
    await pooled(10, 5, async (s) => {
      for (let i = 0; i < CALLS; i++) {
        const { answer } = await request(url, sessions[s]!, i + 10, "tools/call", {
          name: "big",
          arguments: { rows: ROWS, tag: `s${s}-${i}` },
        });
        const meta = (answer.result as { _meta?: Record<string, unknown> })._meta;
        expect(meta?.["toolpacks/handle"]).toBeDefined();
      }
    });
    const after = rss(served.proc.pid!);

    let total = 0;
    const held: number[] = [];
    for (const [i, session] of [warm.session, ...sessions].entries()) {
      const { answer } = await request(url, session, 1000 + i, "tools/call", {
        name: "inspect_state",
        arguments: {},
      });
      const listed = (answer.result as { structuredContent: { total_bytes: number; handles: unknown[] } })
        .structuredContent;
      expect(listed.total_bytes).toBeLessThanOrEqual(SESSION_BUDGET);
      total += listed.total_bytes;
      held.push(listed.handles.length);
    }
    const grown = after - before;
    console.log(
      `state memory: 10 sessions × ${CALLS} results of ${ROWS} rows; stored ${(total / MiB).toFixed(1)} MiB ` +
        `(budget ${TOTAL_BUDGET / MiB} MiB), handles per session ${held.join(",")}; RSS ${(before / MiB).toFixed(0)} → ` +
        `${(after / MiB).toFixed(0)} MiB (+${(grown / MiB).toFixed(0)} MiB, stated bound ${(TOTAL_BUDGET + OVERHEAD) / MiB} MiB)`,
    );
    expect(total).toBeLessThanOrEqual(TOTAL_BUDGET);
    // The newest sessions kept values; the total bound evicted the oldest values of the others.
    expect(held.at(-1)).toBeGreaterThan(0);
    // With the memory store the server is always ready, and says its store is up.
    const ready = await fetch(`${served.base}/readyz`);
    expect({ status: ready.status, body: await ready.json() }).toEqual({
      status: 200,
      body: { ready: true, store: "up" },
    });
    expect(grown).toBeLessThan(TOTAL_BUDGET + OVERHEAD);
  }, 240_000);
});
