/** The Redis store against a real redis-server: the contract, two replicas sharing it, outages and recovery. */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { planState, type StateLimits } from "../../src/state/config.js";
import { StoreUnavailableError } from "../../src/state/errors.js";
import { openStateStore } from "../../src/state/open.js";
import type { StateStore } from "../../src/state/types.js";
import { freePort, NO_REDIS, type RedisServer, startRedis, until } from "../helpers/redis.js";
import { unless } from "../helpers/skip.js";
import { describeStateStoreContract, text } from "../helpers/state-contract.js";

const TTL = 60_000;
let redis: RedisServer;
let deployments = 0;
const opened: StateStore[] = [];

beforeAll(async () => {
  if (NO_REDIS) return;
  redis = await startRedis();
});
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
  await redis?.cleanup();
});

/** A store on `url` for deployment `name`; closed after the file. */
async function open(
  url: string,
  name: string,
  limits: Partial<StateLimits> = {},
  timeoutMs = 2000,
): Promise<StateStore> {
  const s = await openStateStore(planState({ store: url }, name, {}, { ...limits, timeoutMs }));
  opened.push(s);
  return s;
}

/** Settles to the outcome, or "hung" if it has not settled well past the store's own time bound. */
function outcome(p: Promise<unknown>): Promise<unknown> {
  return Promise.race([
    p.then(
      (v) => ({ ok: v }),
      (e: unknown) => e,
    ),
    new Promise((r) => setTimeout(() => r("hung"), 10_000)),
  ]);
}

// redis-server comes from Debian's package, which .ci/run installs; without it every test here is skipped.
describe.skipIf(NO_REDIS !== undefined)(
  unless(NO_REDIS, "the Redis store against a real redis-server"),
  () => {
    describeStateStoreContract("redis", {
      open: (limits) => open(redis.url, `contract${++deployments}`, limits),
      elapse: (ms) => new Promise((r) => setTimeout(r, ms)),
    });

    describe("redis store shared by replicas", () => {
      test("two replicas putting at once never take an owner or the total over its budget", async () => {
        const limits = { maxOwnerBytes: 8192, maxTotalBytes: 16_384 };
        const name = `budget${++deployments}`;
        const [r1, r2] = [await open(redis.url, name, limits), await open(redis.url, name, limits)];
        const owners = ["o1", "o2", "o3", "o4"];
        await Promise.all(
          Array.from({ length: 120 }, (_, i) =>
            (i % 2 ? r1 : r2).put(owners[i % 4]!, `k${i}`, text(1000 + ((i * 37) % 2000)), TTL),
          ),
        );
        let listed = 0;
        for (const o of owners) {
          const mine = (await r1.list(o)).reduce((sum, v) => sum + v.size, 0);
          expect(mine).toBeLessThanOrEqual(8192);
          expect((await r2.usage(o)).owner).toBe(mine);
          listed += mine;
        }
        const { total } = await r2.usage("o1");
        expect(total).toBe(listed);
        expect(total).toBeLessThanOrEqual(16_384);
        // What Redis really holds under this deployment's prefix matches the count.
        const raw = new Redis(redis.url);
        try {
          const bodies = await raw.keys(`toolpacks:${name}:v:*`);
          let held = 0;
          for (const k of bodies) held += await raw.strlen(k);
          for (const o of owners) {
            for (const v of Object.values(await raw.hgetall(`toolpacks:${name}:i:${o}`))) {
              held += Buffer.byteLength(v.slice(v.indexOf("|") + 1));
            }
          }
          expect(held).toBe(total);
        } finally {
          raw.disconnect();
        }
      });

      test("a session ended on one replica is ended on the other, and on one that starts later", async () => {
        const name = `ended${++deployments}`;
        const [r1, r2] = [await open(redis.url, name), await open(redis.url, name)];
        const started = performance.now();
        await r1.end("tp1.session-a");
        await until(() => r2.isEnded("tp1.session-a"));
        // Measured, not asserted (the brief's bound is 100 ms): printed for the report.
        console.log(`ended id reached the other replica in ${(performance.now() - started).toFixed(1)} ms`);
        expect(r2.isEnded("tp1.session-b")).toBe(false);
        const late = await open(redis.url, name);
        expect(late.isEnded("tp1.session-a")).toBe(true);
        const elsewhere = await open(redis.url, `other${++deployments}`);
        expect(elsewhere.isEnded("tp1.session-a")).toBe(false);
      });

      test("ends one replica pushed out of Redis leave every replica, and one that starts later, in doubt of ids issued by then", async () => {
        const name = `forgotten${++deployments}`;
        const limits = { maxEnded: 3 };
        const [r1, r2] = [await open(redis.url, name, limits), await open(redis.url, name, limits)];
        const before = Date.now();
        await r1.end("tp1.pushed-out");
        for (let i = 0; i < 3; i++) await r1.end(`tp1.later-${i}`);
        expect(r1.forgottenUntil()).toBeGreaterThanOrEqual(before - 1000);
        await until(() => r2.isEnded("tp1.later-2"));
        expect(r2.forgottenUntil()).toBeGreaterThanOrEqual(before - 1000);
        const late = await open(redis.url, name, limits);
        // One of the four is pushed out: the oldest, or (ends in the same millisecond tie) any of them…
        const ids = ["tp1.pushed-out", "tp1.later-0", "tp1.later-1", "tp1.later-2"];
        expect(ids.filter((id) => !late.isEnded(id))).toHaveLength(1);
        // …and the horizon covers it: an id issued by then is never rebuilt, whichever it was.
        expect(late.forgottenUntil()).toBeGreaterThanOrEqual(before - 1000);
      });

      test("nothing secret is in a key or value in the clear, and every key is under the deployment's prefix", async () => {
        const name = `secrets${++deployments}`;
        const s = await open(redis.url, name);
        await s.end("tp1.secret-session-id");
        await s.kvPut("oauth", "alice-principal", "ciphertext", TTL);
        await s.put("ownerdigest", "files/read/1", text(10), TTL);
        const raw = new Redis(redis.url);
        try {
          const keys = await raw.keys(`*`);
          const ours = keys.filter((k) => k.includes(name));
          expect(ours.length).toBeGreaterThan(0);
          for (const k of ours) expect(k.startsWith(`toolpacks:${name}:`)).toBe(true);
          const dump = JSON.stringify([ours, await raw.zrange(`toolpacks:${name}:ended`, 0, "-1")]);
          expect(dump).not.toContain("secret-session-id");
          expect(dump).not.toContain("alice-principal");
        } finally {
          raw.disconnect();
        }
      });
    });

    describe("redis store when Redis is away", () => {
      test("a store cannot open without Redis: StoreUnavailableError naming the store, password redacted", async () => {
        const url = `redis://:hunter2hunter2@127.0.0.1:${await freePort()}/0`;
        const e = await outcome(openStateStore(planState({ store: url }, "x", {})));
        expect(e).toBeInstanceOf(StoreUnavailableError);
        const err = e as StoreUnavailableError;
        expect(err.store).toContain("***@127.0.0.1");
        expect(`${err.message} ${String(err.cause)}`).not.toContain("hunter2");
      });

      test("opened without waiting while Redis is away, a store is down, fails typed, and comes up by itself when Redis starts", async () => {
        const later = await startRedis();
        await later.stop();
        try {
          const health: string[] = [];
          const plan = planState({ store: later.url }, "late", {});
          const s = await openStateStore(plan, { wait: false, onHealth: (h) => health.push(h) });
          opened.push(s);
          expect(s.health()).toBe("down");
          expect(await outcome(s.get("o", "k"))).toBeInstanceOf(StoreUnavailableError);
          await later.start();
          await until(() => s.health() === "up");
          expect(await s.put("o", "k", text(10), TTL)).toMatchObject({ stored: true });
          // It listens for ended ids once connected.
          const other = await open(later.url, "late");
          await other.end("tp1.ended-elsewhere");
          await until(() => s.isEnded("tp1.ended-elsewhere"));
          expect(health).toEqual(["down", "up"]);
        } finally {
          await later.cleanup();
        }
      });

      test("a wrong password is refused at open, and the error does not carry it", async () => {
        const locked = await startRedis({ password: "right-password" });
        try {
          const ok = await open(locked.url, "locked");
          expect(ok.health()).toBe("up");
          const wrong = locked.url.replace("right-password", "wrong-password");
          const e = await outcome(openStateStore(planState({ store: wrong }, "locked", {})));
          expect(e).toBeInstanceOf(StoreUnavailableError);
          expect((e as Error).message).not.toContain("wrong-password");
        } finally {
          await locked.cleanup();
        }
      });

      test("Redis stopped mid-run: operations fail fast and typed, health is down; restarted: the store recovers with its data", async () => {
        const durable = await startRedis({ durable: true });
        try {
          const health: string[] = [];
          const plan = planState({ store: durable.url }, "outage", {});
          const s = await openStateStore(plan, { onHealth: (h) => health.push(h) });
          opened.push(s);
          await s.put("o", "kept", text(500), TTL);
          await s.kvPut("oauth", "u", "sealed", TTL);
          await s.end("tp1.ended-before");

          await durable.stop("SIGKILL");
          await until(() => s.health() === "down");
          for (const op of [
            s.get("o", "kept"),
            s.put("o", "new", text(10), TTL),
            s.list("o"),
            s.kvGet("oauth", "u"),
            s.end("tp1.ended-during"),
          ]) {
            const e = await outcome(op);
            expect(e).toBeInstanceOf(StoreUnavailableError);
            expect((e as StoreUnavailableError).store).toBe(plan.kind === "redis" ? plan.description : "");
            // Refused because the connection is known to be down, not after waiting out the command timeout.
            expect((e as Error).message).not.toMatch(/timed out/);
          }
          // Local and synchronous, Redis or not.
          expect(s.isEnded("tp1.ended-before")).toBe(true);
          expect(s.isEnded("tp1.ended-during")).toBe(true);

          await durable.start();
          await until(() => s.health() === "up");
          expect(health).toEqual(["down", "up"]);
          expect((await s.get("o", "kept"))?.text).toBe("x".repeat(500));
          expect(await s.kvGet("oauth", "u")).toBe("sealed");
          expect(await s.put("o", "new", text(10), TTL)).toMatchObject({ stored: true });
          const later = await open(durable.url, "outage");
          expect(later.isEnded("tp1.ended-before")).toBe(true);
          // What was ended during the outage reaches the others once Redis is back (reloaded or published),
          await until(() => later.isEnded("tp1.ended-during"));
          // and the recovered store hears of ids ended elsewhere again (it subscribed anew).
          await later.end("tp1.ended-after");
          await until(() => s.isEnded("tp1.ended-after"));
        } finally {
          await durable.cleanup();
        }
      });

      test("a hung Redis: commands fail after the command timeout, health is down until it answers again", async () => {
        const hung = await startRedis();
        try {
          const s = await open(hung.url, "hung", {}, 1000);
          await s.kvPut("ns", "k", "v", TTL);
          hung.pause();
          const e = await outcome(s.kvGet("ns", "k"));
          expect(e).toBeInstanceOf(StoreUnavailableError);
          expect((e as Error).message).toMatch(/timed out/);
          expect(s.health()).toBe("down");
          hung.resume();
          await until(async () => (await s.kvGet("ns", "k").catch(() => undefined)) === "v");
          expect(s.health()).toBe("up");
        } finally {
          await hung.cleanup();
        }
      });
    });
  },
);
