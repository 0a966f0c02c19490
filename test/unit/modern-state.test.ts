/** 2026-07-28 requests (no session): their spans, and who owns the values they capture. */
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, test } from "vitest";
import { silentLogger } from "../../src/log.js";
import { modernClient } from "../../src/proxy/clients.js";
import { HandleStore } from "../../src/proxy/handles.js";
import { bindingOf } from "../../src/proxy/instances.js";
import { DEFAULT_LIMITS } from "../../src/state/config.js";
import { MemoryStateStore } from "../../src/state/memory.js";
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
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};

interface Recorded {
  kind: "server" | "client";
  id: number;
  attrs: McpSpanAttributes;
  parent: unknown;
  ended?: SpanOutcome;
}

/** A tracing that records spans and injects a recognisable traceparent. */
function recordingTracing(): Tracing & { spans: Recorded[] } {
  const spans: Recorded[] = [];
  const ids = new Map<McpSpan, number>();
  const make = (r: Recorded): McpSpan => {
    spans.push(r);
    const s: McpSpan = {
      traceId: "t",
      inject: (meta) => Object.assign(meta, { traceparent: `span-${r.id}` }),
      set: (attrs) => Object.assign(r.attrs, attrs),
      end: (outcome) => {
        r.ended ??= outcome;
      },
    };
    ids.set(s, r.id);
    return s;
  };
  return {
    spans,
    enabled: true,
    serverSpan: (_m, _t, attrs, parent) =>
      make({ kind: "server", id: spans.length, attrs: { ...attrs }, parent }),
    clientSpan: (parent, _m, _t, attrs) =>
      make({ kind: "client", id: spans.length, attrs: { ...attrs }, parent: ids.get(parent) }),
    flush: async () => {},
    shutdown: async () => {},
  };
}

/** Runs one 2026-07-28 request on a session as the HTTP endpoint does (an exchange of its own, its headers). */
async function runModern(
  host: FakeHost,
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
  void host;
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
    const answer = await runModern(host, session, { name: "read", arguments: {} }, headers);
    expect(answer.result).toBeDefined();
    const [server, client] = tracing.spans;
    expect(server).toMatchObject({ kind: "server", attrs: { transport: "http" } });
    expect(server!.parent).toEqual({ traceparent: "00-header", tracestate: "k=v" });
    expect(client).toMatchObject({ kind: "client", parent: server!.id });
    // _meta wins over the header when it has one.
    await runModern(
      host,
      session,
      { name: "read", arguments: {}, _meta: { traceparent: "00-meta" } },
      headers,
    );
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
    const [a, b] = [host.open("", OFFERS, "ctx-a", mine), host.open("toolsets=files", OFFERS, "ctx-b", mine)];
    const theirs = host.open("", OFFERS, "ctx-c", host.handles.credentialOwner("binding-theirs"));
    const handleOf = (r: Awaited<ReturnType<typeof runModern>>) =>
      (r.result!._meta as { "toolpacks/handle": { handle: string } })["toolpacks/handle"].handle;
    const first = handleOf(await runModern(host, a, { name: "read", arguments: {} }));
    const used = await runModern(host, b, { name: "write", arguments: { content: first } });
    expect(used.result).toBeDefined();
    expect(host.seen.at(-1)!.params.arguments).toEqual({ content: "x".repeat(5000) });
    const refused = await runModern(host, theirs, { name: "write", arguments: { content: first } });
    expect(refused.error?.code).toBe(-32602);
    await runModern(host, b, { name: "read", arguments: {} });
    await runModern(host, a, { name: "read", arguments: {} });
    expect((await host.state.usage(mine)).owner).toBeLessThanOrEqual(12_000);
    expect((await host.state.list(mine)).map((v) => v.key)).toEqual(["files/read/2", "files/read/3"]);
    expect((await runModern(host, b, { name: "write", arguments: { content: first } })).error?.code).toBe(
      -32602,
    );
  });

  test("a context of callers without credentials has no owner: a large result comes back whole, a handle is refused", async () => {
    const host = new FakeHost(catalogOf(CATALOG));
    host.script = () => big;
    const anonymous = host.open("", OFFERS, "ctx-anon", null);
    const answer = await runModern(host, anonymous, { name: "read", arguments: {} });
    expect(answer.result).toMatchObject(big);
    expect(answer.result!._meta).not.toHaveProperty("toolpacks/handle");
    const refused = await runModern(host, anonymous, {
      name: "write",
      arguments: { content: "@state:files/read/1" },
    });
    expect(refused.error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/no captured values/),
    });
    expect(host.seen.filter((s) => s.method === "tools/call")).toHaveLength(1);
  });
});
