/**
 * A session with a state store and tracing: which calls touch the store, how a trace flows through, and the
 * same for 2026-07-28 requests (no session): their spans, and who owns the values they capture.
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, test } from "vitest";
import { modernClient } from "../../src/codec/modern.js";
import { silentLogger } from "../../src/log.js";
import { Gateway } from "../../src/proxy/gateway.js";
import { BEARER_OWNER, HandleStore } from "../../src/proxy/handles.js";
import { bindingOf } from "../../src/proxy/instances.js";
import { DEFAULT_LIMITS } from "../../src/state/config.js";
import { MemoryStateStore } from "../../src/state/memory.js";
import type { StateStore } from "../../src/state/types.js";
import { NOOP_SPAN } from "../../src/tracing/noop.js";
import type { McpSpan, McpSpanAttributes, SpanOutcome, Tracing } from "../../src/tracing/types.js";
import { catalogOf } from "../helpers/catalog.js";
import { FakeHost, rawClient } from "../helpers/session-host.js";

const CATALOG = `
upstreams:
  fs: { command: fs-server }
toolsets:
  files:
    capture: { over_bytes: 1000 }
    tools: [fs/read, fs/write]
`;
const OFFERS = {
  fs: {
    tools: [
      { name: "read", inputSchema: { type: "object", properties: { path: { type: "string" } } } },
      { name: "write", inputSchema: { type: "object", properties: { content: { type: "string" } } } },
    ],
  },
};

/** A memory store that records every method called on it, and can be closed (down) by the test. */
function recordingStore() {
  const inner = new MemoryStateStore({ limits: DEFAULT_LIMITS });
  const calls: string[] = [];
  const store = new Proxy(inner, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== "function" || prop === "health" || prop === "isEnded") return v;
      return (...args: unknown[]) => {
        calls.push(String(prop));
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  }) as StateStore;
  return { store, calls, inner };
}

describe("the state store on a session's calls", () => {
  test("a catalog whose state.store names Redis is never served from memory instead", () => {
    const catalog = catalogOf(`state: { store: "redis://:\${PW}@127.0.0.1:1/0" }\n${CATALOG}`, {
      PW: "pw-secret",
    });
    const open = () =>
      new Gateway(catalog, { name: "t", version: "0", toolsetsTool: true, logger: silentLogger });
    expect(open).toThrow(/state\.store is redis:\/\/:\*\*\*@127\.0\.0\.1:1\/0: open it with openStateStore/);
    expect(open).not.toThrow(/pw-secret/);
  });

  test("a call without a handle whose result is small never asks the store, even when it is down", async () => {
    const { store, calls, inner } = recordingStore();
    await inner.close();
    const host = new FakeHost(catalogOf(CATALOG), store);
    host.script = () => ({ content: [{ type: "text", text: "small" }] });
    const raw = await rawClient(host.open("", OFFERS));
    for (let i = 1; i <= 5; i++) {
      await raw.send({ id: i, method: "tools/call", params: { name: "read", arguments: { path: "a" } } });
      expect((await raw.answer(i)).result).toEqual({ content: [{ type: "text", text: "small" }] });
    }
    expect(calls).toEqual([]);
  });

  test("with the store down, a large result comes back as sent and a handle fails naming the store", async () => {
    const { store, inner } = recordingStore();
    const host = new FakeHost(catalogOf(CATALOG), store);
    const large = { content: [{ type: "text", text: "z".repeat(5000) }] };
    host.script = () => large;
    const raw = await rawClient(host.open("", OFFERS));
    await raw.send({ id: 1, method: "tools/call", params: { name: "read", arguments: { path: "a" } } });
    const first = (await raw.answer(1)).result as { _meta: Record<string, { handle: string }> };
    const handle = first._meta["toolpacks/handle"]!.handle;
    await inner.close();
    await raw.send({ id: 2, method: "tools/call", params: { name: "read", arguments: { path: "b" } } });
    expect((await raw.answer(2)).result).toEqual(large);
    await raw.send({
      id: 3,
      method: "tools/call",
      params: { name: "write", arguments: { content: handle } },
    });
    const e = (await raw.answer(3)).error;
    expect(e).toMatchObject({ code: -32603, data: { store: "memory" } });
    expect(e?.message).toMatch(/state store memory is unavailable/);
    expect(host.seen.filter((s) => s.method === "tools/call")).toHaveLength(2);
  });

  test("two sessions' handles of the same name are each their own", async () => {
    const host = new FakeHost(catalogOf(CATALOG));
    let n = 0;
    host.script = (_m, params) =>
      (params.name as string) === "read"
        ? { content: [{ type: "text", text: String(++n).repeat(2000) }] }
        : { content: [{ type: "text", text: String((params.arguments as { content: string }).content[0]) }] };
    const [a, b] = [
      await rawClient(host.open("", OFFERS, "ka")),
      await rawClient(host.open("", OFFERS, "kb")),
    ];
    for (const c of [a, b]) {
      await c.send({ id: 1, method: "tools/call", params: { name: "read", arguments: {} } });
      await c.answer(1);
    }
    for (const [c, want] of [
      [a, "1"],
      [b, "2"],
    ] as const) {
      await c.send({
        id: 2,
        method: "tools/call",
        params: { name: "write", arguments: { content: "@state:files/read/1" } },
      });
      expect((await c.answer(2)).result).toEqual({ content: [{ type: "text", text: want }] });
    }
  });
});

interface Recorded {
  kind: "server" | "client";
  id: number;
  method: string;
  target: string | undefined;
  attrs: McpSpanAttributes;
  parent: unknown;
  ended?: SpanOutcome;
}

/** A tracing that records spans and injects a recognisable traceparent. */
function recordingTracing(): Tracing & { spans: Recorded[] } {
  const spans: Recorded[] = [];
  const span = (r: Recorded): McpSpan => ({
    traceId: "t",
    inject: (meta) => Object.assign(meta, { traceparent: `span-${r.id}` }),
    set: (attrs) => Object.assign(r.attrs, attrs),
    end: (outcome) => {
      r.ended ??= outcome;
    },
  });
  const byObject = new Map<McpSpan, Recorded>();
  const make = (r: Recorded) => {
    spans.push(r);
    const s = span(r);
    byObject.set(s, r);
    return s;
  };
  return {
    spans,
    enabled: true,
    serverSpan: (method, target, attrs, parentMeta) =>
      make({ kind: "server", id: spans.length, method, target, attrs: { ...attrs }, parent: parentMeta }),
    clientSpan: (parent, method, target, attrs) =>
      make({
        kind: "client",
        id: spans.length,
        method,
        target,
        attrs: { ...attrs },
        parent: byObject.get(parent)?.id,
      }),
    flush: async () => {},
    shutdown: async () => {},
  };
}

describe("tracing through a session", () => {
  test("a call is a SERVER span under the caller's context, a CLIENT span under it, whose context goes upstream", async () => {
    const host = new FakeHost(catalogOf(CATALOG));
    const tracing = recordingTracing();
    host.tracing = tracing;
    const raw = await rawClient(host.open("", OFFERS));
    const meta = { traceparent: "00-client", baggage: "a=b", progressToken: 7, "x-vendor": 1 };
    await raw.send({ id: 9, method: "tools/call", params: { name: "read", arguments: {}, _meta: meta } });
    await raw.answer(9);
    const [server, client] = tracing.spans;
    expect(server).toMatchObject({
      kind: "server",
      method: "tools/call",
      target: "read",
      parent: meta,
      attrs: { requestId: 9, transport: "stdio", toolset: "files", upstream: "fs" },
      ended: { result: { content: [{ type: "text", text: "ok" }] } },
    });
    expect(client).toMatchObject({
      kind: "client",
      method: "tools/call",
      target: "read",
      parent: server!.id,
      attrs: { upstream: "fs", toolset: "files", transport: "stdio" },
    });
    expect(client!.ended).toBeDefined();
    const sent = host.seen.find((s) => s.method === "tools/call")!.params._meta;
    // The client's own fields pass; its trace context is replaced by the CLIENT span's; its progress token is ours.
    expect(sent).toEqual({ traceparent: `span-${client!.id}`, baggage: "a=b", "x-vendor": 1 });
  });

  test("a failed request ends its SERVER span with the error", async () => {
    const host = new FakeHost(catalogOf(CATALOG));
    const tracing = recordingTracing();
    host.tracing = tracing;
    const raw = await rawClient(host.open("", OFFERS));
    await raw.send({ id: 1, method: "tools/call", params: { name: "nope", arguments: {} } });
    await raw.answer(1);
    expect(tracing.spans).toHaveLength(1);
    expect((tracing.spans[0]!.ended as { error: { code: number } }).error.code).toBe(-32602);
  });

  test("with tracing off the upstream's _meta is the client's own, and no span is made", async () => {
    const host = new FakeHost(catalogOf(CATALOG));
    expect(host.tracing.serverSpan("x", undefined, {}, {})).toBe(NOOP_SPAN);
    const raw = await rawClient(host.open("", OFFERS));
    const meta = { traceparent: "00-client", "x-vendor": 1 };
    await raw.send({ id: 1, method: "tools/call", params: { name: "read", arguments: {}, _meta: meta } });
    await raw.answer(1);
    expect(host.seen.find((s) => s.method === "tools/call")!.params._meta).toEqual(meta);
  });
});

const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** Runs one 2026-07-28 request on a session as the HTTP endpoint does (an exchange of its own, its headers). */
async function runModern(
  session: ReturnType<FakeHost["open"]>,
  params: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  const sent: JSONRPCMessage[] = [];
  const reply = { send: async (m: JSONRPCMessage) => void sent.push(m), abandon: () => {} };
  const m = {
    id: 1,
    method: "tools/call",
    params: { ...params, _meta: { ...ENVELOPE, ...(params._meta as object) } },
  };
  await session.run(
    m,
    modernClient({ protocolVersion: "2026-07-28", clientCapabilities: {} }),
    reply,
    undefined,
    new AbortController().signal,
    headers,
  );
  return sent.at(-1) as { result?: Record<string, unknown>; error?: { code: number; message: string } };
}

describe("spans of 2026-07-28 requests", () => {
  test("a 2026-07-28 tools/call continues the trace in its _meta: SERVER span, CLIENT span under it, context upstream", async () => {
    const host = new FakeHost(catalogOf(CATALOG));
    const tracing = recordingTracing();
    host.tracing = tracing;
    const raw = await rawClient(host.open("", OFFERS));
    const meta = { ...ENVELOPE, traceparent: "00-client", "x-vendor": 1 };
    await raw.send({ id: 3, method: "tools/call", params: { name: "read", arguments: {}, _meta: meta } });
    expect((await raw.answer(3)).result).toMatchObject({ content: [{ type: "text", text: "ok" }] });
    const [server, client] = tracing.spans;
    expect(server).toMatchObject({
      kind: "server",
      parent: meta,
      attrs: { requestId: 3, protocolVersion: "2026-07-28", toolset: "files", upstream: "fs" },
    });
    expect(server!.ended).toHaveProperty("result");
    expect(client).toMatchObject({ kind: "client", parent: server!.id });
    expect(client!.ended).toHaveProperty("result");
    // The envelope stays here; the upstream gets the CLIENT span's context and the client's other fields.
    const upstream = host.seen.find((s) => s.method === "tools/call")!.params._meta;
    expect(upstream).toEqual({ traceparent: `span-${client!.id}`, "x-vendor": 1 });
  });

  test("over HTTP without a traceparent in _meta, the request's traceparent header is the SERVER span's parent", async () => {
    const host = new FakeHost(catalogOf(CATALOG));
    const tracing = recordingTracing();
    host.tracing = tracing;
    const session = host.open("", OFFERS);
    const headers = { traceparent: "00-header", tracestate: "k=v", "x-other": "no" };
    const answer = await runModern(session, { name: "read", arguments: {} }, headers);
    expect(answer.result).toBeDefined();
    const [server, client] = tracing.spans;
    expect(server).toMatchObject({ kind: "server", attrs: { transport: "http" } });
    expect(server!.parent).toEqual({ traceparent: "00-header", tracestate: "k=v" });
    expect(client).toMatchObject({ kind: "client", parent: server!.id });
    // _meta wins over the header when it has one.
    await runModern(session, { name: "read", arguments: {}, _meta: { traceparent: "00-meta" } }, headers);
    expect((tracing.spans[2]!.parent as { traceparent: string }).traceparent).toBe("00-meta");
  });
});

describe("who owns what a 2026-07-28 request captures", () => {
  const big = { content: [{ type: "text", text: "x".repeat(5000) }] };

  test("the owner of a credential's values is a keyed digest: the same on replicas sharing the secret, never the credential's plain digest", () => {
    const store = new MemoryStateStore({ limits: DEFAULT_LIMITS });
    const handles = (secret?: string) =>
      new HandleStore({ store, maxOwnerBytes: 1 << 20, logger: silentLogger, ...(secret ? { secret } : {}) });
    const binding = bindingOf({ names: ["authorization"], values: { authorization: "Bearer t0ken" } });
    const [a, b] = [handles("s3cret").credentialOwner(binding), handles("s3cret").credentialOwner(binding)];
    expect(a).toBe(b);
    expect(a).not.toContain(binding);
    expect(a).not.toContain("t0ken");
    expect(handles("other").credentialOwner(binding)).not.toBe(a);
    expect(handles().credentialOwner(binding)).not.toBe(handles().credentialOwner(binding));
    const other = bindingOf({ names: ["authorization"], values: { authorization: "Bearer other" } });
    expect(handles("s3cret").credentialOwner(other)).not.toBe(a);
  });

  test("two contexts of one credential share its values and one budget; another credential's context sees none", async () => {
    // A budget of two values: the third capture of one owner, through either context, evicts its oldest.
    const limits = { ...DEFAULT_LIMITS, maxOwnerBytes: 12_000 };
    const host = new FakeHost(catalogOf(CATALOG), new MemoryStateStore({ limits }));
    host.script = (_m, params) => (params.name === "read" ? big : { content: [{ type: "text", text: "w" }] });
    const mine = host.handles.credentialOwner("binding-mine");
    const [a, b] = [
      host.open("", OFFERS, "ctx-a", undefined, mine),
      host.open("toolsets=files", OFFERS, "ctx-b", undefined, mine),
    ];
    const theirs = host.open("", OFFERS, "ctx-c", undefined, host.handles.credentialOwner("binding-theirs"));
    const handleOf = (r: Awaited<ReturnType<typeof runModern>>) =>
      (r.result!._meta as { "toolpacks/handle": { handle: string } })["toolpacks/handle"].handle;
    const first = handleOf(await runModern(a, { name: "read", arguments: {} }));
    const used = await runModern(b, { name: "write", arguments: { content: first } });
    expect(used.result).toBeDefined();
    expect(host.seen.at(-1)!.params.arguments).toEqual({ content: "x".repeat(5000) });
    const refused = await runModern(theirs, { name: "write", arguments: { content: first } });
    expect(refused.error?.code).toBe(-32602);
    await runModern(b, { name: "read", arguments: {} });
    await runModern(a, { name: "read", arguments: {} });
    expect((await host.state.usage(mine)).owner).toBeLessThanOrEqual(12_000);
    const kept = (await host.state.list(mine)).map((v) => v.key);
    expect(kept).toHaveLength(2);
    expect(kept).not.toContain(first.slice("@state:".length));
    expect((await runModern(b, { name: "write", arguments: { content: first } })).error?.code).toBe(-32602);
  });

  test("a caller without credentials or identity gets a bearer handle: 128 random bits, honoured for whoever holds it, listed to no one", async () => {
    const host = new FakeHost(catalogOf(CATALOG));
    host.script = (_m, params) => (params.name === "read" ? big : { content: [{ type: "text", text: "w" }] });
    const [one, other] = [
      host.open("", OFFERS, "ctx-anon-1", undefined, BEARER_OWNER),
      host.open("", OFFERS, "ctx-anon-2", undefined, BEARER_OWNER),
    ];
    const answer = await runModern(one, { name: "read", arguments: {} });
    const { handle } = (answer.result!._meta as { "toolpacks/handle": { handle: string } })[
      "toolpacks/handle"
    ];
    // "@state:~" + 22 base64url characters (128 bits) + "/" + scope.
    expect(handle).toMatch(/^@state:~[\w-]{22}\/files\/read$/);
    const again = await runModern(one, { name: "read", arguments: {} });
    expect(
      (again.result!._meta as { "toolpacks/handle": { handle: string } })["toolpacks/handle"].handle,
    ).not.toBe(handle);
    // Whoever holds it may use it, from another context too.
    expect((await runModern(other, { name: "write", arguments: { content: handle } })).result).toBeDefined();
    expect(host.seen.at(-1)!.params.arguments).toEqual({ content: "x".repeat(5000) });
    // A counter-shaped or altered handle names nothing.
    for (const guess of ["@state:files/read/1", `${handle.slice(0, -12)}X/files/read`]) {
      const refused = await runModern(other, { name: "write", arguments: { content: guess } });
      expect(refused.error).toMatchObject({
        code: -32602,
        message: expect.stringMatching(/Unknown or expired handle/),
      });
    }
    // inspect_state lists nothing to a bearer caller, yet reads a handle it names.
    const listed = await runModern(other, { name: "inspect_state", arguments: {} });
    expect(JSON.parse((listed.result!.content as { text: string }[])[0]!.text)).toMatchObject({
      handles: [],
    });
    const read = await runModern(other, { name: "inspect_state", arguments: { handle } });
    expect(read.result!.isError).not.toBe(true);
  });

  test("callers without credentials share one budget: their captures never evict a credential owner's values", async () => {
    const limits = { ...DEFAULT_LIMITS, maxOwnerBytes: 12_000, maxTotalBytes: 30_000 };
    const host = new FakeHost(catalogOf(CATALOG), new MemoryStateStore({ limits }));
    host.script = () => big;
    const mine = host.handles.credentialOwner("binding-mine");
    const ctx = host.open("", OFFERS, "ctx-cred", undefined, mine);
    await runModern(ctx, { name: "read", arguments: {} });
    await runModern(ctx, { name: "read", arguments: {} });
    const anon = host.open("", OFFERS, "ctx-anon", undefined, BEARER_OWNER);
    for (let i = 0; i < 20; i++) await runModern(anon, { name: "read", arguments: {} });
    expect((await host.state.list(mine)).length).toBe(2);
    expect((await host.state.usage(mine)).total).toBeLessThanOrEqual(30_000);
  });

  test("a credential owner's handles carry 128 random bits, not a counter", async () => {
    const host = new FakeHost(catalogOf(CATALOG));
    host.script = () => big;
    const ctx = host.open("", OFFERS, "ctx-cred", undefined, host.handles.credentialOwner("binding"));
    const answer = await runModern(ctx, { name: "read", arguments: {} });
    const { handle } = (answer.result!._meta as { "toolpacks/handle": { handle: string } })[
      "toolpacks/handle"
    ];
    expect(handle).toMatch(/^@state:files\/read\/[\w-]{22}$/);
  });
});
