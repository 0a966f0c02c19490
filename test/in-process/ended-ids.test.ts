/**
 * Ended signed session ids stay ended whatever the churn (SPEC §8.1): the ended ids a replica remembers are
 * bounded (state limits' maxEnded, 10,000 by default: test/unit/state/config.test.ts), and an id issued before the latest end it forgot is not
 * rebuilt, so pushing an id out of the remembered set no longer brings it back. Two replicas in process sharing
 * the secret, each with its own memory store, through the HTTP edge (toolpacks.request). The store remembers 100
 * ends here, not 10,000: the same path past the same bound, without 10,000 session openings (about 25 s through
 * the CLI, still 10 to 30 s in process, most of it signing ids); the clock is moved past the skew an id issued
 * after the churn is allowed (1 s), which the real churn took longer than.
 */
import { afterEach, describe, expect, test, vi } from "vitest";
import { createLogger } from "../../src/log.js";
import { DEFAULT_LIMITS } from "../../src/state/config.js";
import { openStateStore } from "../../src/state/open.js";
import type { StateStore } from "../../src/state/types.js";
import { type InProcess, initialize, inProcess, post } from "../helpers/in-process.js";

const CONFIG = `
upstreams:
  main: { command: in-process }
`;
const SECRET = "ended-ids-shared-secret-0123";
const REMEMBERED = 100;

const open: (InProcess | StateStore)[] = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close();
  vi.useRealTimers();
});

/** A replica: its own core and memory store, the shared secret; everything it logs (debug included) kept. */
async function replica(): Promise<InProcess & { log: () => string }> {
  const lines: string[] = [];
  const state = await openStateStore({
    kind: "memory",
    limits: { ...DEFAULT_LIMITS, maxEnded: REMEMBERED },
  });
  open.push(state);
  const tp = inProcess(CONFIG, {
    sessionSecret: SECRET,
    state,
    logger: createLogger({ level: "debug", format: "text", write: (l) => void lines.push(l) }),
  });
  open.push(tp);
  return { ...tp, log: () => lines.join("") };
}

const end = async (r: InProcess, session: string) =>
  (await post(r.toolpacks, undefined, { method: "DELETE", session })).status;

/** The status a request naming `session` gets (200: served, or rebuilt from the signed id). */
const statusOf = async (r: InProcess, session: string) =>
  (await post(r.toolpacks, { jsonrpc: "2.0", id: 1, method: "tools/list" }, { session })).status;

describe("ended session ids", () => {
  test("a deleted signed session id stays deleted after more other sessions end on its replica than it remembers; an id issued since is still rebuilt", async () => {
    // Only Date: ids are stamped and ends recorded by the wall clock; timers stay real.
    vi.useFakeTimers({ toFake: ["Date"], now: Date.parse("2026-01-01T00:00:00Z") });
    const [a, b] = [await replica(), await replica()];
    const deleted = await initialize(a.toolpacks);
    expect(await end(a, deleted)).toBe(200);
    expect(await statusOf(a, deleted)).toBe(404);
    // Opened on B before the churn, never seen by A: in doubt on A once A forgot ends after its issue.
    const before = await initialize(b.toolpacks);

    const churn = REMEMBERED + 20;
    const workers = Array.from({ length: 16 }, async (_, w) => {
      for (let i = w; i < churn; i += 16) {
        const id = await initialize(a.toolpacks);
        expect(await end(a, id)).toBe(200);
      }
    });
    await Promise.all(workers);

    expect(await statusOf(a, deleted)).toBe(404);
    expect(await statusOf(a, before)).toBe(404);
    // Issued after everything A forgot: A rebuilds it from the signed id, as before.
    vi.setSystemTime(Date.now() + 5_000);
    const since = await initialize(b.toolpacks);
    expect(await statusOf(a, since)).toBe(200);
    expect(a.log()).not.toContain(deleted);
  });
});
