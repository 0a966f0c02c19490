/** Tracing through a real OTLP/HTTP receiver, and proof that tracing (and Redis) off loads none of their code. */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createTracing } from "../../src/tracing/create.js";
import type { Tracing } from "../../src/tracing/types.js";
import { ROOT, serve, tempDir } from "../helpers/proc.js";
import { openSession, request } from "../helpers/wire.js";

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: OtlpValue }[];
  status?: { code?: number; message?: string };
}
interface Received {
  service: string | undefined;
  span: OtlpSpan;
  attrs: Record<string, string | number | undefined>;
}

const SERVER = 2;
const CLIENT = 3;
const STATUS_ERROR = 2;
const CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";
const HEADER_TRACE = "0af7651916cd43dd8448eb211c80319c";
const HEADER_SPAN = "b7ad6b7169203331";

/** One 2026-07-28 request over HTTP (no session): its envelope in `_meta`, its standard headers and `extra`. */
async function modernCall(url: string, name: string, extra: Record<string, string>) {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": name,
      ...extra,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: {
        name,
        arguments: {},
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    }),
  });
  const text = await res.text();
  const line = text.split("\n").find((l) => l.startsWith("data:"));
  return JSON.parse(line ? line.slice(5) : text) as { result?: { content: { text: string }[] } };
}

/** A minimal OTLP/HTTP (JSON) traces receiver: what the exporter really sends, decoded. */
const received: Received[] = [];
const requests: { path: string; type: string }[] = [];
let receiver: Server;
let endpoint: string;
let tracing: Tracing;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString();
    });
    req.on("end", () => {
      requests.push({ path: req.url ?? "", type: req.headers["content-type"] ?? "" });
      const doc = JSON.parse(body) as {
        resourceSpans: {
          resource: { attributes: { key: string; value: OtlpValue }[] };
          scopeSpans: { spans: OtlpSpan[] }[];
        }[];
      };
      for (const rs of doc.resourceSpans) {
        const service = rs.resource.attributes.find((a) => a.key === "service.name")?.value.stringValue;
        for (const ss of rs.scopeSpans) {
          for (const span of ss.spans) {
            const attrs = Object.fromEntries(
              span.attributes.map((a) => [a.key, a.value.stringValue ?? Number(a.value.intValue)]),
            );
            received.push({ service, span, attrs });
          }
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((ok) => receiver.listen(0, "127.0.0.1", ok));
  endpoint = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
  tracing = await createTracing(
    { endpoint, service_name: "toolpacks-test" },
    { env: {}, serviceVersion: "9.9.9" },
  );
});
afterAll(async () => {
  await tracing?.shutdown();
  await new Promise((ok) => receiver?.close(ok));
});

const byName = (name: string) => received.find((r) => r.span.name === name);

describe("tracing to an OTLP/HTTP receiver", () => {
  test("a call continues the client's trace: SERVER span under the client's span, CLIENT span under it, injected upstream", async () => {
    expect(tracing.enabled).toBe(true);
    const parentMeta = {
      traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`,
      tracestate: "vendor=abc",
      baggage: "tenant=acme",
      progressToken: 1,
    };
    const server = tracing.serverSpan(
      "tools/call",
      "gh_search",
      {
        requestId: 7,
        protocolVersion: "2025-11-25",
        sessionDigest: "3f2a9c81d0e4",
        transport: "http",
        toolset: "issues",
      },
      parentMeta,
    );
    const client = tracing.clientSpan(server, "tools/call", "search_issues", {
      requestId: 3,
      transport: "http",
      serverAddress: "api.example.test",
      serverPort: 8443,
      upstream: "github",
      toolset: "issues",
    });
    const meta = client.inject({ ...parentMeta, progressToken: 5 });
    client.end({ result: { content: [], isError: true } });
    server.end({ result: { content: [] } });
    await tracing.flush();

    const s = byName("tools/call gh_search");
    const c = byName("tools/call search_issues");
    expect(s && c).toBeTruthy();
    expect(s!.service).toBe("toolpacks-test");
    expect(s!.span).toMatchObject({ kind: SERVER, traceId: CALLER_TRACE, parentSpanId: CALLER_SPAN });
    expect(s!.attrs).toMatchObject({
      "mcp.method.name": "tools/call",
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "gh_search",
      "mcp.protocol.version": "2025-11-25",
      "mcp.session.id": "3f2a9c81d0e4",
      "jsonrpc.request.id": "7",
      "network.transport": "tcp",
      "toolpacks.toolset": "issues",
    });
    expect(s!.attrs["error.type"]).toBeUndefined();
    expect(c!.span).toMatchObject({ kind: CLIENT, traceId: CALLER_TRACE, parentSpanId: s!.span.spanId });
    expect(c!.attrs).toMatchObject({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "search_issues",
      "jsonrpc.request.id": "3",
      "server.address": "api.example.test",
      "server.port": 8443,
      "toolpacks.upstream": "github",
      "error.type": "tool_error",
    });
    expect(c!.span.status?.code).toBe(STATUS_ERROR);
    // The upstream sees the CLIENT span as its parent, in the client's trace, with its state and baggage.
    expect(meta.traceparent).toBe(`00-${CALLER_TRACE}-${c!.span.spanId}-01`);
    expect(meta.tracestate).toBe("vendor=abc");
    expect(meta.baggage).toBe("tenant=acme");
    expect(meta.progressToken).toBe(5);
    expect(requests.every((r) => r.path === "/v1/traces" && r.type.startsWith("application/json"))).toBe(
      true,
    );
  });

  test("a request without trace context starts a trace; an error names its JSON-RPC code or class", async () => {
    const server = tracing.serverSpan("resources/read", undefined, { transport: "stdio" }, { other: 1 });
    const client = tracing.clientSpan(server, "resources/read", undefined, { resourceUri: "file:///a" });
    client.end({ error: new McpError(-32602, "no such resource") });
    server.end({ error: new TypeError("boom") });
    await tracing.flush();
    const [s, c] = received.filter((r) => r.span.name === "resources/read").map((r) => r);
    const srv = [s, c].find((r) => r!.span.kind === SERVER)!;
    const cli = [s, c].find((r) => r!.span.kind === CLIENT)!;
    expect(srv.span.parentSpanId ?? "").toBe("");
    expect(srv.attrs).toMatchObject({ "network.transport": "pipe", "error.type": "TypeError" });
    expect(cli.span.parentSpanId).toBe(srv.span.spanId);
    expect(cli.attrs).toMatchObject({
      "mcp.resource.uri": "file:///a",
      "error.type": "-32602",
      "rpc.response.status_code": "-32602",
    });
    expect(cli.span.status).toMatchObject({
      code: STATUS_ERROR,
      message: expect.stringContaining("no such resource"),
    });
  });
});

describe("tracing through the real CLI", () => {
  const tmp = tempDir();
  afterAll(() => tmp.cleanup());

  test("a 2025 call with a traceparent in _meta, and a 2026-07-28 call with a traceparent header: each a SERVER span under the client's span, a CLIENT span under it, and the upstream continues the client's trace", async () => {
    const config = tmp.file(
      "packs.yaml",
      `tracing: { endpoint: "${endpoint}", service_name: toolpacks-cli }
upstreams:
  probe: { command: node, args: ["${join(ROOT, "test/helpers/probe-server.mjs")}"] }
`,
    );
    const served = await serve([config]);
    let upstreamMeta: Record<string, unknown>;
    let modernMeta: Record<string, unknown>;
    try {
      const url = served.url();
      const { session } = await openSession(url);
      const meta = { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, tracestate: "vendor=abc" };
      const { answer } = await request(url, session, 5, "tools/call", {
        name: "echo_meta",
        arguments: {},
        _meta: meta,
      });
      upstreamMeta = JSON.parse((answer.result as { content: { text: string }[] }).content[0]!.text);
      // A 2026-07-28 request (no session) whose trace context comes in the W3C header.
      const modern = await modernCall(url, "echo_meta", {
        traceparent: `00-${HEADER_TRACE}-${HEADER_SPAN}-01`,
      });
      modernMeta = JSON.parse(modern.result!.content[0]!.text);
    } finally {
      // Shutting down flushes the spans still batched.
      expect(await served.stop()).toBe(0);
    }
    const ours = received.filter((r) => r.service === "toolpacks-cli" && r.span.traceId === CALLER_TRACE);
    const server = ours.find((r) => r.span.kind === SERVER && r.span.name === "tools/call echo_meta");
    const client = ours.find((r) => r.span.kind === CLIENT);
    expect(server?.span.parentSpanId).toBe(CALLER_SPAN);
    expect(server?.attrs).toMatchObject({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "echo_meta",
      "jsonrpc.request.id": "5",
      "network.transport": "tcp",
      "mcp.protocol.version": "2025-11-25",
      "toolpacks.upstream": "probe",
    });
    expect(server?.attrs["mcp.session.id"]).toMatch(/^[0-9a-f]{12}$/);
    expect(client?.span).toMatchObject({ name: "tools/call echo_meta", parentSpanId: server?.span.spanId });
    expect(client?.attrs).toMatchObject({ "network.transport": "pipe", "toolpacks.upstream": "probe" });
    // Exactly these two spans for the call: the initialize and notifications are no part of its trace.
    expect(ours).toHaveLength(2);
    expect(upstreamMeta!).toEqual({
      traceparent: `00-${CALLER_TRACE}-${client?.span.spanId}-01`,
      tracestate: "vendor=abc",
    });
    const modern = received.filter((r) => r.service === "toolpacks-cli" && r.span.traceId === HEADER_TRACE);
    const modernServer = modern.find((r) => r.span.kind === SERVER);
    const modernClient = modern.find((r) => r.span.kind === CLIENT);
    expect(modernServer?.span).toMatchObject({ name: "tools/call echo_meta", parentSpanId: HEADER_SPAN });
    expect(modernServer?.attrs).toMatchObject({
      "mcp.protocol.version": "2026-07-28",
      "jsonrpc.request.id": "7",
      "network.transport": "tcp",
    });
    expect(modernClient?.span.parentSpanId).toBe(modernServer?.span.spanId);
    expect(modernMeta!.traceparent).toBe(`00-${HEADER_TRACE}-${modernClient?.span.spanId}-01`);
  });
});

describe("nothing loaded when off", () => {
  const tmp = tempDir();
  afterAll(() => tmp.cleanup());

  /** Runs a script in a fresh node with a resolve hook that records every module URL it loads. */
  function loadedBy(script: string): string[] {
    const log = join(tmp.dir, `loaded-${Math.random().toString(36).slice(2)}.log`);
    const hooks = tmp.file(
      "hooks.mjs",
      `import { appendFileSync } from "node:fs";
       export async function resolve(specifier, context, next) {
         const r = await next(specifier, context);
         appendFileSync(${JSON.stringify(log)}, r.url + "\\n");
         return r;
       }`,
    );
    const main = tmp.file(
      "main.mjs",
      `import { register } from "node:module";
       register(${JSON.stringify(pathToFileURL(hooks).href)});
       const dist = ${JSON.stringify(pathToFileURL(join(ROOT, "dist")).href)};
       ${script}`,
    );
    execFileSync(process.execPath, [main], { cwd: ROOT, env: { PATH: process.env.PATH ?? "" } });
    return readFileSync(log, "utf8").split("\n").filter(Boolean);
  }

  test("tracing off and a memory store load no OpenTelemetry and no Redis client", () => {
    const off = loadedBy(`
      const { createTracing } = await import(dist + "/tracing/create.js");
      const t = await createTracing(undefined, { env: {} });
      const span = t.serverSpan("tools/call", "x", {}, { traceparent: "00-${CALLER_TRACE}-${CALLER_SPAN}-01" });
      span.inject({}); span.end({ result: {} });
      const { planState } = await import(dist + "/state/config.js");
      const { openStateStore } = await import(dist + "/state/open.js");
      const s = await openStateStore(planState(undefined, "x", {}));
      await s.put("o", "k", { text: "t", bytes: 1, meta: {} }, 1000);
      if (t.enabled || !(await s.get("o", "k"))) process.exit(3);
    `);
    expect(off.some((u) => u.includes("/dist/tracing/create.js"))).toBe(true);
    expect(off.filter((u) => /@opentelemetry|ioredis|tracing\/otel\.js|state\/redis/.test(u))).toEqual([]);
    // The same probe sees them when tracing is on: the check above can fail.
    const on = loadedBy(`
      const { createTracing } = await import(dist + "/tracing/create.js");
      const t = await createTracing({ endpoint: "http://127.0.0.1:9" }, { env: {} });
      await t.shutdown();
    `);
    expect(on.some((u) => u.includes("@opentelemetry/api"))).toBe(true);
  });
});
