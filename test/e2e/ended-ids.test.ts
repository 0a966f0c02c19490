/**
 * Ended signed session ids stay ended whatever the churn (SPEC §8.1): the ended ids a replica remembers are
 * bounded (10,000), and an id issued before the latest end it forgot is not rebuilt, so pushing an id out of the
 * remembered set no longer brings it back. Real CLI, two replicas sharing the secret, the memory store.
 */
import { describe, expect, test } from "vitest";
import { perTest } from "../helpers/harness.js";
import { FIXTURE, type Served, serve } from "../helpers/proc.js";
import { closeSession, initializeRequest, openSession, pooled, post } from "../helpers/wire.js";

const { tmp, cleanups } = perTest();
const SECRET = { TOOLPACKS_SESSION_SECRET: "ended-ids-shared-secret-0123" };

async function replica(): Promise<Served> {
  const config = tmp.file(
    "packs.yaml",
    `upstreams:\n  main: { command: node, args: ["${FIXTURE}", "--tools", "echo"] }\n`,
  );
  const served = await serve([config], SECRET);
  cleanups.push(() => served.stop("SIGKILL"));
  return served;
}

/** The status a request naming `session` gets (200: served, or rebuilt from the signed id). */
async function statusOf(url: string, session: string): Promise<number> {
  const r = await post(url, { jsonrpc: "2.0", id: 1, method: "tools/list" }, { session });
  return r.status;
}

describe("ended session ids", () => {
  test("a deleted signed session id stays deleted after 10,020 other sessions end on its replica; an id issued since is still rebuilt", {
    timeout: 300_000,
  }, async () => {
    const [a, b] = [await replica(), await replica()];
    const url = a.url();
    const deleted = (await openSession(url)).session;
    expect(await closeSession(url, deleted)).toBe(200);
    expect(await statusOf(url, deleted)).toBe(404);
    // Opened on B before the churn, never seen by A: in doubt on A once A forgot ends after its issue.
    const before = (await openSession(b.url())).session;

    const started = performance.now();
    await pooled(10_020, 16, async () => {
      const init = await post(url, initializeRequest());
      const id = init.headers.get("mcp-session-id");
      if (!id) throw new Error(`initialize failed: ${init.status}`);
      expect(await closeSession(url, id)).toBe(200);
    });

    console.log(`10,020 initialize+DELETE pairs in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    expect(await statusOf(url, deleted)).toBe(404);
    expect(await statusOf(url, before)).toBe(404);
    // Issued after everything A forgot: A rebuilds it from the signed id, as before.
    const since = (await openSession(b.url())).session;
    expect(await statusOf(url, since)).toBe(200);
    expect(a.stderr()).not.toContain(deleted);
  });
});
