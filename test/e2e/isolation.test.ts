/**
 * What one client can do to another through the real CLI and real servers: reach, change or read what
 * belongs to another. Each test is one row of SPEC §7.5's isolation table, or a defect the review found.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema, ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type Recorded, readEvents, recordedClient, waitForEvent } from "../helpers/mcp.js";
import { FIXTURE, httpClient, ROOT, type Served, serve, tempDir } from "../helpers/proc.js";

const PROBE = join(ROOT, "test/helpers/probe-server.mjs");
const WORKSPACE = join(ROOT, "examples/workspace");
const tmp = tempDir();
const probeEvents = join(tmp.dir, "probe.events");
const SECRETS = {
  TOOLPACKS_SESSION_SECRET: "session-secret-0123456789",
  MINE_SECRET: "mine-credential-4242",
  THEIRS_SECRET: "theirs-credential-9191",
};
const config = tmp.file(
  "packs.yaml",
  `
upstreams:
  mine:
    command: node
    args: ["${FIXTURE}", "--whoami", "--tools", "echo,slow"]
    env: { MINE: "\${MINE_SECRET}" }
  theirs:
    command: node
    args: ["${FIXTURE}", "--whoami", "--tools", "echo", "--name", "theirs"]
    env: { THEIRS: "\${THEIRS_SECRET}" }
    prefix: t_
  keyed:
    command: node
    args: ["${FIXTURE}", "--whoami", "--tools", "echo", "--name", "keyed"]
    isolation: per-session
    header_env: { x-api-key: API_KEY }
    env: { DIR: "\${instance.dir}", ID: "\${instance.id}" }
    prefix: k_
  probe:
    command: node
    args: ["${PROBE}", "--events-file", "${probeEvents}"]
  every:
    command: mcp-server-everything
  fs:
    command: mcp-server-filesystem
    args: ["${WORKSPACE}"]
  notes:
    command: mcp-server-memory
    isolation: per-session
    env: { MEMORY_FILE_PATH: "\${instance.dir}/memory.jsonl" }
`,
);

let served: Served;
const open: (Client | Recorded)[] = [];
const client = async (query: string, capabilities = {}, headers?: Record<string, string>) => {
  const c = await httpClient(served.url(query), capabilities, headers);
  open.push(c);
  return c;
};
const recorded = async (query: string, options: Parameters<typeof recordedClient>[1] = {}) => {
  const c = await recordedClient(served.url(query), options);
  open.push(c);
  return c;
};
const textOf = (r: unknown) =>
  ((r as { content?: { text?: string }[] }).content ?? []).map((c) => c.text ?? "").join("\n");
const metric = async (name: string) => {
  const text = await (await fetch(`${served.base}/metrics`)).text();
  return text.split("\n").filter((l) => l.startsWith(name));
};

beforeAll(async () => {
  served = await serve([config, "--log-level", "debug"], SECRETS);
});
afterAll(async () => {
  await Promise.all(open.map((c) => c.close().catch(() => {})));
  await served?.stop();
  tmp.cleanup();
});

describe("environment", () => {
  test("a stdio upstream never sees the proxy's secrets or another upstream's credentials", async () => {
    const c = await client("only=mine");
    const me = (await c.callTool({ name: "whoami", arguments: {} })).structuredContent as {
      env: Record<string, string>;
    };
    expect(me.env.MINE).toBe(SECRETS.MINE_SECRET);
    expect(me.env.PATH).toBeTruthy();
    const all = JSON.stringify(me.env);
    expect(all).not.toContain(SECRETS.THEIRS_SECRET);
    expect(all).not.toContain(SECRETS.TOOLPACKS_SESSION_SECRET);
    expect(Object.keys(me.env).filter((k) => k.startsWith("TOOLPACKS_"))).toEqual([]);
  });
});

describe("roots", () => {
  test("a client's roots never reach a shared upstream", async () => {
    let asked = 0;
    const c = await recorded("only=fs", {
      capabilities: { roots: { listChanged: true } },
      setup: (cl) =>
        cl.setRequestHandler(ListRootsRequestSchema, async () => {
          asked++;
          return { roots: [{ uri: "file:///etc", name: "etc" }] };
        }),
    });
    await c.client.sendRootsListChanged();
    const allowed = await c.client.callTool({ name: "list_allowed_directories", arguments: {} });
    expect(textOf(allowed)).toContain(WORKSPACE);
    expect(textOf(allowed)).not.toContain("/etc");
    const passwd = await c.client.callTool({ name: "read_text_file", arguments: { path: "/etc/passwd" } });
    expect(passwd.isError).toBe(true);
    expect(textOf(passwd)).not.toContain("root:");
    expect(asked).toBe(0);
  });
});

describe("attribution on a shared instance", () => {
  // The review's case: b's call has ended, a keeps one open; the upstream then logs and elicits, tied to no call.
  // "The one session with a call in flight" was a; now nobody is, and the upstream hears a clear refusal.
  test("a client that keeps a slow call open never receives, nor answers, another client's log lines or elicitation", async () => {
    let answered = 0;
    const a = await recorded("only=probe", {
      capabilities: { elicitation: { form: {} } },
      setup: (cl) =>
        cl.setRequestHandler(ElicitRequestSchema, async () => {
          answered++;
          return { action: "accept", content: { secret: "a's answer" } };
        }),
    });
    const b = await recorded("only=probe", { capabilities: { elicitation: { form: {} } } });
    await Promise.all([a.client.setLoggingLevel("debug"), b.client.setLoggingLevel("debug")]);
    const stop = new AbortController();
    const busy = a.client
      .callTool({ name: "wait", arguments: {} }, undefined, { signal: stop.signal })
      .catch((e: unknown) => e);
    const later = () => readEvents(probeEvents).filter((e) => e.event === "later" && e.tag === "b-secret");
    try {
      await waitForEvent(
        probeEvents,
        () => readEvents(probeEvents).some((e) => JSON.stringify(e).includes('"wait"')),
        "a's wait upstream",
      );
      await b.client.callTool({ name: "later", arguments: { tag: "b-secret" } });
      await waitForEvent(probeEvents, () => later().length > 0, "the probe's untied elicitation outcome");
    } finally {
      stop.abort();
      await busy;
    }
    expect(answered).toBe(0);
    expect(String(later()[0]?.error)).toContain("isolation: per-session");
    await b.client.ping();
    const tagged = (c: Recorded) =>
      c.received.filter(
        (m) => JSON.stringify(m).includes("b-secret") && m.method === "notifications/message",
      );
    expect(tagged(a)).toEqual([]);
    expect(tagged(b)).toEqual([]);
    expect((await metric("toolpacks_untied_messages_total")).join("\n")).toMatch(
      /upstream="probe",kind="log"\} [1-9]/,
    );
  });
});

describe("per-session instances", () => {
  test("one client's notes are never another's", async () => {
    const a = await client("only=notes");
    const b = await client("only=notes");
    await a.callTool({
      name: "create_entities",
      arguments: { entities: [{ name: "a-private", entityType: "secret", observations: ["mine"] }] },
    });
    expect(textOf(await a.callTool({ name: "read_graph", arguments: {} }))).toContain("a-private");
    expect(textOf(await b.callTool({ name: "read_graph", arguments: {} }))).not.toContain("a-private");
  });

  test("a per-session instance's folder is private and goes with its session", async () => {
    const headers = { "x-api-key": "alpha-key-1" };
    const c = await client("only=keyed", {}, headers);
    const me = (await c.callTool({ name: "k_whoami", arguments: {} })).structuredContent as {
      env: Record<string, string>;
    };
    const dir = me.env.DIR!;
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(me.env.ID).toMatch(/^[0-9a-f]{32}$/);
    expect(me.env.API_KEY).toBe("alpha-key-1");
    const id = (c.transport as { sessionId?: string }).sessionId!;
    const del = await fetch(served.url(), {
      method: "DELETE",
      headers: { "mcp-session-id": id, ...headers },
    });
    expect(del.status).toBe(200);
    await expect.poll(() => statSync(dir, { throwIfNoEntry: false })).toBeUndefined();
  });

  test("a session bound to a credential serves no request with another value or none", async () => {
    const c = await client("only=keyed", {}, { "x-api-key": "alpha-key-1" });
    const id = (c.transport as { sessionId?: string }).sessionId!;
    const call = (headers: Record<string, string>, method = "POST") =>
      fetch(served.url(), {
        method,
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-session-id": id,
          ...headers,
        },
        ...(method === "POST"
          ? {
              body: JSON.stringify({
                jsonrpc: "2.0",
                id: 9,
                method: "tools/call",
                params: { name: "k_whoami" },
              }),
            }
          : {}),
      });
    expect((await call({ "x-api-key": "beta-key-2" })).status).toBe(403);
    expect((await call({})).status).toBe(403);
    expect((await call({ accept: "text/event-stream" }, "GET")).status).toBe(403);
    expect((await call({}, "DELETE")).status).toBe(403);
    const ok = await call({ "x-api-key": "alpha-key-1" });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("alpha-key-1");
  });
});

describe("session ids", () => {
  test("no log line holds a raw session id", async () => {
    const c = await client("only=mine");
    await c.callTool({ name: "echo", arguments: { text: "hi" } });
    const id = (c.transport as { sessionId?: string }).sessionId!;
    expect(id).toMatch(/^tp1\./);
    await fetch(served.url(), { method: "DELETE", headers: { "mcp-session-id": id } });
    expect(served.stderr()).toContain("call");
    expect(served.stderr()).not.toContain(id);
    expect(served.stderr()).not.toContain(id.split(".")[1]!);
  });

  test("an ended session stays ended on its replica, however its id is spelled", async () => {
    const c = await client("only=mine");
    const id = (c.transport as { sessionId?: string }).sessionId!;
    await fetch(served.url(), { method: "DELETE", headers: { "mcp-session-id": id } });
    for (const spelling of [id, `${id}=`, `${id}.x`, `${id} `]) {
      const r = await fetch(served.url(), {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json",
          "mcp-session-id": spelling,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      });
      expect(r.status, spelling).toBe(404);
    }
  });
});

describe("reload", () => {
  const own = tempDir();
  const write = (extra: string) =>
    own.file(
      "packs.yaml",
      `
upstreams:
  fx:
    command: node
    args: ["${FIXTURE}", "--whoami", "--tools", "echo"]
${extra}`,
    );
  let s: Served;
  beforeAll(async () => {
    s = await serve([write("")]);
  });
  afterAll(async () => {
    await s?.stop();
    own.cleanup();
  });
  const pidOf = async (c: Client) =>
    ((await c.callTool({ name: "whoami", arguments: {} })).structuredContent as { pid: number }).pid;
  const reloaded = async (n: number) => {
    s.proc.kill("SIGHUP");
    await expect.poll(() => s.stderr().split("config reloaded").length - 1, { timeout: 20_000 }).toBe(n);
  };

  test("a reload that makes an upstream per-session moves open sessions onto their own instances", async () => {
    const a = await httpClient(s.url());
    const b = await httpClient(s.url());
    open.push(a, b);
    const shared = await pidOf(a);
    expect(await pidOf(b)).toBe(shared);
    write("    isolation: per-session\n");
    await reloaded(1);
    const [pa, pb] = [await pidOf(a), await pidOf(b)];
    expect(pa).not.toBe(shared);
    expect(pb).not.toBe(shared);
    expect(pa).not.toBe(pb);
  });

  test("a reload that makes an upstream read a credential header ends the sessions opened without it", async () => {
    const c = await httpClient(s.url());
    open.push(c);
    await pidOf(c);
    write("    isolation: per-session\n    header_env: { x-api-key: API_KEY }\n");
    await reloaded(2);
    const err = await c.callTool({ name: "whoami", arguments: {} }).catch((e: Error) => e);
    expect(String(err)).toMatch(/404|Session not found/);
  });
});
