/**
 * Two replicas sharing a real redis-server, behind a real nginx (round-robin): handles, ended sessions and
 * outages across replicas, through the real CLI and the real server-filesystem.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type Nginx, NO_NGINX, startNginx } from "../helpers/nginx.js";
import { type Served, serve, tempDir, until } from "../helpers/proc.js";
import { NO_REDIS, type RedisServer, startRedis } from "../helpers/redis.js";
import { unless } from "../helpers/skip.js";
import { closeSession, type Message, openSession, request } from "../helpers/wire.js";

const PASSWORD = "redis-pass-for-tests-7f3a";
const SECRET = "replica-secret-for-redis-tests";
const tmp = tempDir();
const work = join(tmp.dir, "work");
const file = join(work, "big.txt");
const original = Array.from({ length: 1500 }, (_, i) => `line ${i}: ${"ünïcødé ✓ ".repeat(4)}`).join("\n");

let redis: RedisServer;
let a: Served;
let b: Served;
let lb: Nginx;
let ids = 0;

const config = (extra = "") =>
  tmp.file(
    `packs-${++ids}.yaml`,
    `name: redis-replicas
upstreams:
  fs: { command: mcp-server-filesystem, args: ["${work}"] }
toolsets:
  files:
    capture: { over_bytes: 16384 }
    tools: [fs/read_text_file, fs/write_file, fs/list_allowed_directories]
${extra}`,
  );

/** tools/call through `base`; returns the answer (result or error). */
async function call(base: string, session: string, name: string, args: Record<string, unknown>) {
  return (await request(`${base}/mcp`, session, ++ids, "tools/call", { name, arguments: args })).answer;
}
const handleOf = (m: Message) =>
  (m.result as { _meta?: Record<string, { handle: string }> })._meta?.["toolpacks/handle"]?.handle;
const textOf = (m: Message) => (m.result as { content: { text: string }[] }).content[0]!.text;
/** The HTTP status a session's request gets on a replica (404 once the session has ended there). */
const statusOn = (base: string, session: string) =>
  fetch(`${base}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-session-id": session,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  }).then(async (r) => {
    await r.arrayBuffer();
    return r.status;
  });
const json = async (url: string) => {
  const r = await fetch(url);
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
};

/** Both services, or why this file cannot run here (the first one missing, with the command that installs it). */
const missing = NO_REDIS ?? NO_NGINX;

beforeAll(async () => {
  if (missing) return;
  mkdirSync(work);
  writeFileSync(file, original);
  redis = await startRedis({ durable: true, password: PASSWORD });
  const env = { TOOLPACKS_SESSION_SECRET: SECRET, TOOLPACKS_STATE_STORE: redis.url };
  const cfg = config();
  [a, b] = await Promise.all([serve([cfg], env), serve([cfg], env)]);
  lb = await startNginx([new URL(a.base).host, new URL(b.base).host]);
});
afterAll(async () => {
  await lb?.stop();
  await Promise.all([a?.stop(), b?.stop()]);
  await redis?.cleanup();
  tmp.cleanup();
});

describe.skipIf(missing !== undefined)(unless(missing, "two replicas sharing Redis behind nginx"), () => {
  test("through round-robin, a file read on one replica is written back by handle on the other, byte-identical", async () => {
    const { session } = await openSession(`${lb.base}/mcp`);
    const pairs: { read: string; write: string }[] = [];
    for (let i = 0; i < 4; i++) {
      const before = readFileSync(lb.log, "utf8").trim().split("\n").length;
      const read = await call(lb.base, session, "read_text_file", { path: file });
      const handle = handleOf(read);
      expect(handle).toMatch(/^@state:files\/read_text_file\/\d+$/);
      const write = await call(lb.base, session, "write_file", {
        path: join(work, `copy-${i}.txt`),
        content: handle,
      });
      expect(write.error).toBeUndefined();
      expect(readFileSync(join(work, `copy-${i}.txt`))).toEqual(readFileSync(file));
      const [r, w] = readFileSync(lb.log, "utf8")
        .trim()
        .split("\n")
        .slice(before)
        .map((l) => l.split(" ")[1]!);
      pairs.push({ read: r!, write: w! });
    }
    // Round-robin sent reads and their writes to different replicas.
    expect(pairs.some((p) => p.read !== p.write)).toBe(true);
    console.log(
      "redis replicas: read → write backends:",
      pairs.map((p) => `${p.read}→${p.write}`).join(", "),
    );
  });

  test("a handle captured on A is used on B and listed by inspect_state on either, directly", async () => {
    const { session } = await openSession(`${a.base}/mcp`);
    const handle = handleOf(await call(a.base, session, "read_text_file", { path: file }))!;
    const target = join(work, "direct-copy.txt");
    expect(
      (await call(b.base, session, "write_file", { path: target, content: handle })).error,
    ).toBeUndefined();
    expect(readFileSync(target)).toEqual(readFileSync(file));
    const listed = (await call(b.base, session, "inspect_state", {})).result as {
      structuredContent: { handles: { handle: string }[] };
    };
    expect(listed.structuredContent.handles.map((h) => h.handle)).toEqual([handle]);
    // Another session (any replica) does not see it.
    const other = (await openSession(`${b.base}/mcp`)).session;
    const stolen = await call(a.base, other, "write_file", {
      path: join(work, "stolen.txt"),
      content: handle,
    });
    expect(stolen.error?.code).toBe(-32602);
  });

  test("a DELETE on one replica ends the session on the other", async () => {
    const { session } = await openSession(`${a.base}/mcp`);
    expect((await call(b.base, session, "list_allowed_directories", {})).error).toBeUndefined();
    const deleted = performance.now();
    expect(await closeSession(`${a.base}/mcp`, session)).toBe(200);
    const status = () => statusOn(b.base, session);
    await until(async () => (await status()) === 404, "404 on the other replica");
    console.log(
      `redis replicas: DELETE on A → 404 on B after ${(performance.now() - deleted).toFixed(1)} ms`,
    );
    expect(await status()).toBe(404);
  });

  test("Redis stopped mid-run: plain calls work, handles fail naming the store, results come back whole; restarted: all resumes, nothing acknowledged lost", async () => {
    const kept = (await openSession(`${a.base}/mcp`)).session;
    const handle = handleOf(await call(a.base, kept, "read_text_file", { path: file }))!;
    const doomed = (await openSession(`${a.base}/mcp`)).session;
    expect((await call(b.base, doomed, "list_allowed_directories", {})).error).toBeUndefined();
    for (const r of [a, b]) expect(await json(`${r.base}/readyz`)).toMatchObject({ status: 200 });

    await redis.stop("SIGKILL");
    for (const r of [a, b]) {
      await until(async () => (await json(`${r.base}/healthz`)).body.store === "down", "store down");
      expect(await json(`${r.base}/healthz`)).toMatchObject({
        status: 200,
        body: { ok: true, store: "down" },
      });
      expect(await json(`${r.base}/readyz`)).toMatchObject({ status: 503, body: { ready: false } });
      // A call that needs no store works.
      expect((await call(r.base, kept, "list_allowed_directories", {})).error).toBeUndefined();
    }
    const started = performance.now();
    const refused = await call(b.base, kept, "write_file", {
      path: join(work, "during.txt"),
      content: handle,
    });
    console.log(
      `redis replicas: a handle while Redis is down failed in ${(performance.now() - started).toFixed(0)} ms`,
    );
    expect(refused.error?.code).toBe(-32603);
    expect(refused.error?.message).toContain(`redis://:***@127.0.0.1:${redis.port}/0 is unavailable`);
    // A result that would have been captured comes back as the upstream sent it.
    const whole = await call(b.base, kept, "read_text_file", { path: file });
    expect(handleOf(whole)).toBeUndefined();
    expect(textOf(whole)).toBe(original);
    // A DELETE while Redis is down ends the session here at once, and on the other replica once Redis is back.
    expect(await closeSession(`${a.base}/mcp`, doomed)).toBe(200);

    await redis.start();
    for (const r of [a, b]) await until(async () => (await json(`${r.base}/readyz`)).status === 200, "ready");
    const target = join(work, "after.txt");
    expect((await call(b.base, kept, "write_file", { path: target, content: handle })).error).toBeUndefined();
    expect(readFileSync(target)).toEqual(readFileSync(file));
    expect(handleOf(await call(a.base, kept, "read_text_file", { path: file }))).toBeDefined();
    await until(
      async () => (await statusOn(b.base, doomed)) === 404,
      "the session deleted during the outage ends on the other replica",
    );
    for (const r of [a, b]) {
      expect(r.stderr()).toContain("state store unavailable");
      expect(r.stderr()).toContain("state store is back");
      expect(r.stderr()).not.toContain(PASSWORD);
    }
  });

  test("--stateless with a Redis store captures nothing: results come back whole and nothing is stored", async () => {
    const name = "redis-stateless";
    const cfg = tmp.file("stateless.yaml", readFileSync(config(), "utf8").replace("redis-replicas", name));
    const s = await serve([cfg, "--stateless"], { TOOLPACKS_STATE_STORE: redis.url });
    try {
      const listed = await request(`${s.base}/mcp`, "", 1, "tools/list");
      const tools = (listed.answer.result as { tools: { name: string; description?: string }[] }).tools;
      expect(tools.map((t) => t.name)).not.toContain("inspect_state");
      expect(tools.every((t) => !t.description?.includes("@state:"))).toBe(true);
      const read = await request(`${s.base}/mcp`, "", 2, "tools/call", {
        name: "read_text_file",
        arguments: { path: file },
      });
      expect(textOf(read.answer)).toBe(original);
      const raw = new Redis(redis.url);
      try {
        expect(await raw.keys(`toolpacks:${name}:*`)).toEqual([]);
      } finally {
        raw.disconnect();
      }
    } finally {
      await s.stop();
    }
  });
});
