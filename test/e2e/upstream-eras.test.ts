/**
 * How toolpacks finds and remembers each upstream's protocol era, against real servers: the SDK v2 fixture
 * (test/fixtures/modern-server.mjs, both eras, HTTP and stdio) and the 2025 fixtures (SDK v1). The fixture's
 * `--events` file says which process saw which message (stdio) and which headers each POST carried (HTTP).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { silentLogger } from "../../src/log.js";
import { sessionRef, sharedRef } from "../../src/upstream/instance.js";
import { UpstreamPool } from "../../src/upstream/pool.js";
import { catalogOf } from "../helpers/catalog.js";
import { MODERN_FIXTURE, startModernServer } from "../helpers/modern.js";
import { alive, FIXTURE, ROOT, startListening, tempDir, until } from "../helpers/proc.js";

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Event {
  pid: number;
  event: string;
  method?: string;
  headers?: Record<string, string>;
}

function events(file: string): Event[] {
  try {
    return readFileSync(file, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Event);
  } catch {
    return [];
  }
}

/** Messages by the process that read them, in order. */
function byPid(list: Event[]): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const e of list) if (e.event === "message") out.set(e.pid, [...(out.get(e.pid) ?? []), e.method!]);
  return out;
}

function poolOf(yaml: string): UpstreamPool {
  const pool = new UpstreamPool(catalogOf(yaml), {
    clientName: "toolpacks-test",
    clientVersion: "1.0.0",
    logger: silentLogger,
  });
  cleanups.push(() => pool.close());
  return pool;
}

function scratch() {
  const dir = tempDir();
  cleanups.push(() => dir.cleanup());
  return dir;
}

async function modernHttp(args: string[] = []) {
  const server = await startModernServer(args);
  cleanups.push(() => server.stop());
  return server;
}

/** The HTTP fixture (with ARGS) as the one upstream `up` of a pool, and its shared connection. */
async function modernUpstream(args: string[] = []) {
  const modern = await modernHttp(args);
  const pool = poolOf(`
upstreams:
  up:
    url: ${modern.url}
`);
  return { modern, pool, connection: pool.connection(sharedRef("up")) };
}

const stdioModern = (events: string, protocol = "auto") => `
    command: ${process.execPath}
    args: [${MODERN_FIXTURE}, --stdio, --events, ${events}]
    protocol: "${protocol}"`;

test("an HTTP upstream's era is found by server/discover: a 2026-07-28 server gets no session, a 2025 one is initialized", {
  timeout: 60_000,
}, async () => {
  const dir = scratch();
  const file = join(dir.dir, "modern.jsonl");
  const modern = await modernHttp(["--events", file]);
  const legacy = startListening([join(ROOT, "test/conformance/serve-fixture-http.mjs"), "0"]);
  cleanups.push(() => legacy.proc.kill("SIGKILL"));
  const port = await legacy.listening;
  const pool = poolOf(`
upstreams:
  modern:
    url: ${modern.url}
  legacy:
    url: http://127.0.0.1:${port}/mcp
`);
  const inventory = await pool.ensure(["modern", "legacy"]);
  expect(inventory.get("modern")?.status).toBe("ready");
  expect(inventory.get("legacy")?.status).toBe("ready");
  expect(pool.connection(sharedRef("modern")).era).toBe("2026-07-28");
  expect(pool.connection(sharedRef("legacy")).era).toBe("2025");
  const result = await pool
    .connection(sharedRef("modern"))
    .request("tools/call", { name: "whoami", arguments: {} });
  const envelope = (result.structuredContent as { envelope: Record<string, unknown> }).envelope;
  expect(envelope["io.modelcontextprotocol/protocolVersion"]).toBe("2026-07-28");
  expect(envelope["io.modelcontextprotocol/clientInfo"]).toEqual({
    name: "toolpacks-test",
    version: "1.0.0",
  });
  const posts = events(file).filter((e) => e.event === "post");
  expect(posts[0]?.headers?.["mcp-method"]).toBe("server/discover");
  // Stateless from the first request on: the standard headers on every POST, never a session, never initialize.
  for (const p of posts) {
    expect(p.headers?.["mcp-protocol-version"]).toBe("2026-07-28");
    expect(p.headers?.["mcp-method"]).toBeDefined();
    expect(p.headers?.["mcp-session-id"]).toBeUndefined();
  }
  expect(posts.filter((p) => p.headers?.["mcp-method"] === "server/discover")).toHaveLength(1);
});

test("a stdio upstream's era is asked of its own process: a 2026-07-28 server is spoken to there, a 2025 one initialized there", {
  timeout: 60_000,
}, async () => {
  const dir = scratch();
  const file = join(dir.dir, "stdio.jsonl");
  const legacyEvents = join(dir.dir, "legacy.jsonl");
  const pool = poolOf(`
upstreams:
  modern:${stdioModern(file)}
  legacy:
    command: ${process.execPath}
    args: [${FIXTURE}, --events-file, ${legacyEvents}]
`);
  await pool.ensure(["modern", "legacy"]);
  const connection = pool.connection(sharedRef("modern"));
  expect(connection.era).toBe("2026-07-28");
  // One process, whose first message is the probe; no second cold start.
  const seen = byPid(events(file));
  expect([...seen.keys()]).toEqual([connection.pid()]);
  const methods = seen.get(connection.pid()!)!;
  expect(methods[0]).toBe("server/discover");
  expect(methods.filter((m) => m === "server/discover")).toHaveLength(1);
  expect(methods).toContain("tools/list");
  expect(methods).not.toContain("initialize");
  // The 2025 server answered the probe with -32601 and stayed up: it is initialized on that same process.
  const legacy = pool.connection(sharedRef("legacy"));
  expect(legacy.era).toBe("2025");
  const log = events(legacyEvents);
  expect(new Set(log.filter((e) => e.event === "start").map((e) => e.pid))).toEqual(new Set([legacy.pid()]));
  expect(log.filter((e) => e.event === "pre-init").map((e) => e.method)).toEqual(["server/discover"]);
});

test("a stdio server that exits on the probe is replaced by a fresh process, spoken to in 2025", {
  timeout: 60_000,
}, async () => {
  const dir = scratch();
  const file = join(dir.dir, "exits.jsonl");
  const pool = poolOf(`
upstreams:
  rough:
    command: ${process.execPath}
    args: [${FIXTURE}, --before-init, exit, --events-file, ${file}]
`);
  const inventory = await pool.ensure(["rough"]);
  expect(inventory.get("rough")?.status).toBe("ready");
  const connection = pool.connection(sharedRef("rough"));
  expect(connection.era).toBe("2025");
  const log = events(file);
  const pids = [...new Set(log.filter((e) => e.event === "start").map((e) => e.pid))];
  expect(pids).toHaveLength(2);
  expect(pids[1]).toBe(connection.pid());
  expect(alive(pids[0]!)).toBe(false);
  expect(log.filter((e) => e.event === "pre-init")).toHaveLength(1);
  const result = await connection.request("tools/call", { name: "echo", arguments: { text: "hi" } });
  expect(JSON.stringify(result)).toContain("hi");
});

test("a stdio server silent on the probe is ended before its replacement starts: never two copies at once", {
  timeout: 60_000,
}, async () => {
  const dir = scratch();
  const file = join(dir.dir, "silent.jsonl");
  const pool = poolOf(`
upstreams:
  quiet:
    command: ${process.execPath}
    args: [${FIXTURE}, --before-init, ignore, --events-file, ${file}]
    connect_timeout: 4
`);
  const inventory = await pool.ensure(["quiet"]);
  expect(inventory.get("quiet")?.status).toBe("ready");
  const connection = pool.connection(sharedRef("quiet"));
  expect(connection.era).toBe("2025");
  const log = events(file) as (Event & { t: number })[];
  const starts = log.filter((e) => e.event === "start");
  expect(starts).toHaveLength(2);
  const first = starts[0]!;
  const gone = log.find((e) => e.event === "exit" && e.pid === first.pid);
  expect(gone).toBeDefined();
  expect(gone!.t).toBeLessThanOrEqual(starts[1]!.t);
  expect(starts[1]!.pid).toBe(connection.pid());
});

test("an instance waiting for another instance's era probe starts no process before the verdict", {
  timeout: 60_000,
}, async () => {
  const dir = scratch();
  const file = join(dir.dir, "waiting.jsonl");
  const spawns = join(dir.dir, "spawns.txt");
  // sh writes the time each process is spawned (the fixture's own events come only once it has booted).
  const pool = poolOf(`
upstreams:
  quiet:
    command: sh
    args: ["-c", "date +%s%3N >> '${spawns}'; exec '${process.execPath}' '${FIXTURE}' --before-init ignore --events-file '${file}'"]
    isolation: per-session
    connect_timeout: 4
`);
  const a = pool.connection(sessionRef("quiet", "session-a"));
  const b = pool.connection(sessionRef("quiet", "session-b"));
  await Promise.all([a.ensure(), b.ensure()]);
  expect([a.era, b.era]).toEqual(["2025", "2025"]);
  // One probe, a silent one: its verdict comes connect_timeout (4 s) after it was sent, which is after its
  // process was spawned. Every other process is spawned after that verdict: none sat spawned and unread while
  // it ran. (connect_timeout also bounds the replacement's initialize: 4 s leaves a loaded machine time to boot.)
  expect(events(file).filter((e) => e.event === "pre-init")).toHaveLength(1);
  const times = readFileSync(spawns, "utf8").trim().split("\n").map(Number);
  expect(times).toHaveLength(3);
  const [probed, ...later] = times;
  for (const t of later) expect(t - probed!).toBeGreaterThanOrEqual(3_500);
});

test("an instance that closes during its era probe does not fail the instance waiting for that probe", {
  timeout: 60_000,
}, async () => {
  const dir = scratch();
  const file = join(dir.dir, "closing.jsonl");
  const pool = poolOf(`
upstreams:
  quiet:
    command: ${process.execPath}
    args: [${FIXTURE}, --before-init, ignore, --events-file, ${file}]
    isolation: per-session
    connect_timeout: 4
`);
  const a = pool.connection(sessionRef("quiet", "session-a"));
  const b = pool.connection(sessionRef("quiet", "session-b"));
  const first = a.ensure().catch(() => undefined);
  const waiting = b.ensure();
  await until(() => events(file).some((e) => e.event === "pre-init"), "the probe sent");
  await a.close();
  await first;
  expect(await waiting).toMatchObject({ status: "ready" });
  expect(b.era).toBe("2025");
});

test("a stdio command that cannot be spawned is an error the instance reports, not a crash", {
  timeout: 30_000,
}, async () => {
  const pool = poolOf(`
upstreams:
  missing:
    command: /nonexistent/toolpacks-test-server
`);
  const inventory = await pool.ensure(["missing"]);
  expect(inventory.get("missing")).toMatchObject({ status: "unavailable" });
  expect(JSON.stringify(inventory.get("missing"))).toMatch(/ENOENT|nonexistent/);
});

test("pinning an upstream's protocol skips the probe, and its era is known before it starts", {
  timeout: 60_000,
}, async () => {
  const dir = scratch();
  const modern = join(dir.dir, "pinned-modern.jsonl");
  const legacy = join(dir.dir, "pinned-legacy.jsonl");
  const pool = poolOf(`
upstreams:
  modern:${stdioModern(modern, "2026-07-28")}
  legacy:${stdioModern(legacy, "2025")}
`);
  // The session layer chooses a bridge by it, even for an instance that is down.
  expect(pool.connection(sharedRef("modern")).era).toBe("2026-07-28");
  await pool.ensure(["modern", "legacy"]);
  expect(pool.connection(sharedRef("modern")).era).toBe("2026-07-28");
  expect(pool.connection(sharedRef("legacy")).era).toBe("2025");
  // One process each: pinned 2026-07-28 asks server/discover of its own process (it needs the capabilities),
  // pinned 2025 opens with initialize.
  const pinnedModern = [...byPid(events(modern)).values()];
  expect(pinnedModern).toHaveLength(1);
  expect(pinnedModern[0]![0]).toBe("server/discover");
  const pinnedLegacy = [...byPid(events(legacy)).values()];
  expect(pinnedLegacy).toHaveLength(1);
  expect(pinnedLegacy[0]![0]).toBe("initialize");
  expect(pinnedLegacy[0]).not.toContain("server/discover");
});

test("a stdio upstream that restarts is probed again", { timeout: 90_000 }, async () => {
  const dir = scratch();
  const file = join(dir.dir, "restart.jsonl");
  const pool = poolOf(`
upstreams:
  modern:${stdioModern(file)}
`);
  await pool.ensure(["modern"]);
  const connection = pool.connection(sharedRef("modern"));
  const first = connection.pid()!;
  process.kill(first, "SIGKILL");
  await until(() => connection.state?.status === "unavailable", "the upstream down");
  const result = await connection.request("tools/call", { name: "test_simple_text", arguments: {} });
  expect(JSON.stringify(result)).toContain("simple text response");
  expect(connection.era).toBe("2026-07-28");
  // Each process was asked once, as its first message, and was then served on.
  const seen = byPid(events(file));
  expect([...seen.keys()]).toEqual([first, connection.pid()]);
  for (const methods of seen.values()) {
    expect(methods[0]).toBe("server/discover");
    expect(methods.filter((m) => m === "server/discover")).toHaveLength(1);
  }
});

test("an HTTP upstream that comes back speaking 2025 is probed again, and the refused call is replayed", {
  timeout: 90_000,
}, async () => {
  const { modern, connection } = await modernUpstream();
  await connection.ensure();
  expect(connection.era).toBe("2026-07-28");
  const port = new URL(modern.url).port;
  await modern.stop();
  const legacy = startListening([join(ROOT, "test/conformance/serve-fixture-http.mjs"), port]);
  cleanups.push(() => legacy.proc.kill("SIGKILL"));
  await legacy.listening;
  // The 2025 server refuses the stateless request (400: no session): refused before processing, so the era is
  // probed again and the call sent again, on a session.
  const result = await connection.request("tools/call", { name: "test_simple_text", arguments: {} });
  expect(JSON.stringify(result)).toContain("simple text response");
  expect(connection.era).toBe("2025");
});

test("x-mcp-header parameters reach an HTTP upstream as Mcp-Param headers, Mcp-Name as the tool", {
  timeout: 60_000,
}, async () => {
  const dir = scratch();
  const file = join(dir.dir, "headers.jsonl");
  const { connection } = await modernUpstream(["--events", file]);
  await connection.ensure();
  for (const region of ["eu-west", "Zürich"]) {
    const result = await connection.request("tools/call", { name: "regional_echo", arguments: { region } });
    expect(JSON.stringify(result)).toContain(`${region}: `);
  }
  const calls = events(file).filter((e) => e.headers?.["mcp-method"] === "tools/call");
  expect(calls.map((c) => [c.headers?.["mcp-name"], c.headers?.["mcp-param-region"]])).toEqual([
    ["regional_echo", "eu-west"],
    ["regional_echo", `=?base64?${Buffer.from("Zürich").toString("base64")}?=`],
  ]);
});

test("a caller's envelope goes upstream as it is; input_required and -32021 come back as the upstream sent them", {
  timeout: 60_000,
}, async () => {
  const { connection } = await modernUpstream();
  await connection.ensure();
  await connection.request("logging/setLevel", { level: "debug" });
  const envelope = {
    clientCapabilities: { elicitation: { form: {} } },
    clientInfo: { name: "downstream", version: "9" },
  };
  const whoami = await connection.request("tools/call", { name: "whoami", arguments: {} }, { envelope });
  // The caller's capabilities and info, and no logLevel (it asked for none), whatever a 2025 session set.
  expect((whoami.structuredContent as { envelope: unknown }).envelope).toEqual({
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": envelope.clientCapabilities,
    "io.modelcontextprotocol/clientInfo": envelope.clientInfo,
  });
  const asked = await connection.request("tools/call", {
    name: "confirm_action",
    arguments: { action: "deploy" },
  });
  expect(asked).toMatchObject({
    resultType: "input_required",
    inputRequests: { confirm: { method: "elicitation/create" } },
  });
  const refused = await connection
    .request(
      "tools/call",
      { name: "test_missing_capability", arguments: {} },
      { envelope: { clientCapabilities: {} } },
    )
    .catch((err: { code?: number; data?: unknown }) => err);
  expect(refused).toMatchObject({ code: -32021, data: { requiredCapabilities: { sampling: {} } } });
});
