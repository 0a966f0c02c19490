/**
 * The Streamable HTTP client transport against real HTTP servers: the SDK's own (the conformance fixture) and
 * hand-written ones that answer the way real deployments do (stale sessions, web pages, redirects, broken streams).
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  CreateMessageRequestSchema,
  type JSONRPCMessage,
  LATEST_PROTOCOL_VERSION,
  ResultSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, test } from "vitest";
import { silentLogger } from "../../src/log.js";
import { UpstreamConnection } from "../../src/upstream/connection.js";
import { SessionGoneError, StreamBrokenError, UpstreamHttpError } from "../../src/upstream/http-answer.js";
import { HttpClientTransport, type TiedMessageExtra } from "../../src/upstream/http-transport.js";
import { catalogOf } from "../helpers/catalog.js";
import { httpClient, ROOT, serve, startListening, tempDir, until } from "../helpers/proc.js";

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type Rpc = { jsonrpc: "2.0"; id?: string | number | null; method?: string; params?: Record<string, unknown> };
interface Seen {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Rpc | Rpc[] | undefined;
}
type Handle = (req: IncomingMessage, res: ServerResponse, body: Rpc | Rpc[] | undefined) => void;

/** A plain node:http server on 127.0.0.1, port 0, recording every request. */
async function httpServer(handle: Handle): Promise<{ url: URL; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const body = text ? (JSON.parse(text) as Rpc | Rpc[]) : undefined;
    seen.push({ method: req.method!, path: req.url!, headers: req.headers, body });
    handle(req, res, body);
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  cleanups.push(
    () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  );
  return { url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`), seen };
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
};
const raw = (res: ServerResponse, status: number, type: string | undefined, body = "", headers = {}) => {
  res.writeHead(status, { ...(type ? { "content-type": type } : {}), ...headers });
  res.end(body);
};
const sseStart = (res: ServerResponse) => res.writeHead(200, { "content-type": "text/event-stream" });
const sseSend = (res: ServerResponse, m: unknown) =>
  res.write(`event: message\ndata: ${JSON.stringify(m)}\n\n`);
const initResult = (id: unknown) => ({
  jsonrpc: "2.0",
  id,
  result: {
    protocolVersion: LATEST_PROTOCOL_VERSION,
    capabilities: { tools: {} },
    serverInfo: { name: "fake", version: "1.0.0" },
  },
});

/**
 * An MCP server by hand: initialize (a new session each time), 202 for notifications and responses, GET and
 * DELETE as given, and `call` for every other request.
 */
async function mcpServer(options: {
  call: (m: Rpc, res: ServerResponse, session: string) => void;
  get?: (res: ServerResponse) => void;
}) {
  let sessions = 0;
  const live = new Set<string>();
  const server = await httpServer((req, res, body) => {
    const session = req.headers["mcp-session-id"] as string | undefined;
    if (req.method === "DELETE") return raw(res, 200, undefined);
    if (req.method === "GET") return options.get ? options.get(res) : raw(res, 405, undefined);
    const m = body as Rpc;
    if (m.method === "initialize") {
      const id = `s-${++sessions}`;
      live.add(id);
      return json(res, 200, initResult(m.id), { "mcp-session-id": id });
    }
    if (m.id === undefined || m.method === undefined) return raw(res, 202, undefined);
    options.call(m, res, session ?? "");
  });
  return { ...server, live, forgetSessions: () => live.clear() };
}

async function connectClient(url: URL, capabilities = {}) {
  const transport = new HttpClientTransport(url, { name: "web" });
  const client = new Client({ name: "t", version: "1" }, { capabilities });
  cleanups.push(() => client.close());
  const errors: Error[] = [];
  return { transport, client, errors, ready: client.connect(transport) };
}

/** Records what reaches onmessage (after the SDK client installed its handler) with the extra it came with. */
function recordMessages(transport: HttpClientTransport) {
  const got: { m: Rpc; extra: TiedMessageExtra | undefined }[] = [];
  const sdk = transport.onmessage!;
  transport.onmessage = (m, extra) => {
    got.push({ m: m as Rpc, extra: extra as TiedMessageExtra | undefined });
    sdk(m, extra);
  };
  return got;
}

const callTool = (client: Client) =>
  client.request({ method: "tools/call", params: { name: "t", arguments: {} } }, ResultSchema);

describe("messages tied to the request whose POST carried them", () => {
  test("a message on a call's answer stream carries that call's id; one on the GET stream carries none", async () => {
    let stream: ServerResponse | undefined;
    const server = await mcpServer({
      get: (res) => {
        sseStart(res);
        stream = res;
      },
      call: (m, res) => {
        sseStart(res);
        sseSend(res, {
          jsonrpc: "2.0",
          method: "notifications/message",
          params: { level: "info", data: "call" },
        });
        sseSend(res, { jsonrpc: "2.0", id: m.id, result: { content: [] } });
        res.end();
      },
    });
    const { transport, client, ready } = await connectClient(server.url);
    await ready;
    const got = recordMessages(transport);
    await callTool(client);
    const call = server.seen.find((s) => (s.body as Rpc | undefined)?.method === "tools/call")!;
    const callId = (call.body as Rpc).id;
    const onCall = got.find((g) => g.m.method === "notifications/message")!;
    expect(onCall.extra).toEqual({ relatedRequestId: callId });
    expect(got.find((g) => g.m.id === callId)!.extra).toEqual({ relatedRequestId: callId });

    const open = await until(() => stream, "GET stream");
    sseSend(open, {
      jsonrpc: "2.0",
      method: "notifications/message",
      params: { level: "info", data: "get" },
    });
    const fromGet = await until(
      () => got.find((g) => (g.m.params as { data?: string } | undefined)?.data === "get"),
      "the GET stream's message",
    );
    expect(fromGet.extra?.relatedRequestId).toBeUndefined();

    // The session id and protocol version go on everything after initialize; close ends the session.
    for (const s of server.seen.slice(1)) {
      expect(s.headers["mcp-session-id"]).toBe("s-1");
      expect(s.headers["mcp-protocol-version"]).toBe(LATEST_PROTOCOL_VERSION);
    }
    await transport.close();
    expect(server.seen.at(-1)).toMatchObject({ method: "DELETE", headers: { "mcp-session-id": "s-1" } });
  });

  test("an SDK server's log lines and sampling request during a call carry that call's id", async () => {
    const { proc, listening } = startListening([join(ROOT, "test/conformance/serve-fixture-http.mjs"), "0"]);
    cleanups.push(() => proc.kill("SIGKILL"));
    const port = await listening;
    const { transport, client, ready } = await connectClient(new URL(`http://127.0.0.1:${port}/mcp`), {
      sampling: {},
    });
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({
      role: "assistant",
      content: { type: "text", text: "hi" },
      model: "m",
    }));
    await ready;
    const got = recordMessages(transport);
    const sent: Rpc[] = [];
    const send = transport.send.bind(transport);
    transport.send = (m: JSONRPCMessage | JSONRPCMessage[], o) => {
      sent.push(m as Rpc);
      return send(m, o);
    };
    await client.callTool({ name: "test_tool_with_logging", arguments: {} });
    const sampled = await client.callTool({ name: "test_sampling", arguments: { prompt: "p" } });
    expect(sampled.content).toEqual([{ type: "text", text: "LLM response: hi" }]);
    const [logCall, sampleCall] = sent.filter((m) => m.method === "tools/call").map((m) => m.id);
    const logs = got.filter((g) => g.m.method === "notifications/message");
    expect(logs).toHaveLength(3);
    for (const l of logs) expect(l.extra).toEqual({ relatedRequestId: logCall });
    const sampling = got.find((g) => g.m.method === "sampling/createMessage")!;
    expect(sampling.extra).toEqual({ relatedRequestId: sampleCall });
  });
});

describe("a stale session", () => {
  const gone: [string, number, string | undefined, (id: unknown) => string][] = [
    ["404 to a request with a session id", 404, "application/json", () => '{"error":"Session not found"}'],
    [
      "400 No valid session ID provided (server-everything, Notion)",
      400,
      "application/json",
      (id) =>
        JSON.stringify({
          jsonrpc: "2.0",
          error: { code: -32000, message: "Bad Request: No valid session ID provided" },
          id,
        }),
    ],
    [
      "400 Mcp-Session-Id header is required",
      400,
      "text/plain",
      () => "Bad Request: Mcp-Session-Id header is required",
    ],
    [
      "400 Server not initialized",
      400,
      "application/json",
      () =>
        '{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}',
    ],
    [
      "422 with a JSON-RPC error naming an unknown session",
      422,
      "application/json",
      () => '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Unknown session"},"id":null}',
    ],
  ];
  test.each(gone)("%s is a SessionGoneError", async (_name, status, type, body) => {
    const server = await mcpServer({ call: (m, res) => raw(res, status, type, body(m.id)) });
    const { client, ready } = await connectClient(server.url);
    await ready;
    const err = await callTool(client).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SessionGoneError);
    expect((err as Error).message).not.toMatch(/\n/);
  });

  test("a 400 JSON-RPC error answering our request is the upstream's error, not a gone session", async () => {
    const server = await mcpServer({
      call: (m, res) =>
        json(res, 400, { jsonrpc: "2.0", id: m.id, error: { code: -32602, message: "bad name" } }),
    });
    const { client, ready } = await connectClient(server.url);
    await ready;
    const err = (await callTool(client).catch((e: unknown) => e)) as { code: number; message: string };
    expect(err).not.toBeInstanceOf(SessionGoneError);
    expect(err.code).toBe(-32602);
    expect(err.message).toMatch(/bad name/);
  });

  test("a 500 that mentions the session is a server error, not a gone session", async () => {
    const server = await mcpServer({
      call: (_m, res) => raw(res, 500, "text/plain", "session store is down"),
    });
    const { client, ready } = await connectClient(server.url);
    await ready;
    const err = await callTool(client).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamHttpError);
    expect((err as Error).message).toBe(
      "the server answered 500 Internal Server Error: session store is down",
    );
  });
});

function connection(url: URL): UpstreamConnection {
  const spec = catalogOf(`upstreams:\n  web: { url: "${url}", call_timeout: 20 }\n`).upstreams.get("web")!;
  const c = new UpstreamConnection(spec, {
    clientName: "t",
    clientVersion: "1",
    logger: silentLogger,
    hooks: {},
  });
  cleanups.push(() => c.close());
  return c;
}

describe("replaying a request", () => {
  test("a request refused as session gone is sent once more on a new session", async () => {
    const server = await mcpServer({
      call: (m, res, session) => {
        if (m.method !== "tools/call")
          return json(res, 200, { jsonrpc: "2.0", id: m.id, result: { tools: [] } });
        if (!server.live.has(session)) {
          return json(res, 400, {
            jsonrpc: "2.0",
            error: { code: -32000, message: "Bad Request: No valid session ID provided" },
            id: m.id,
          });
        }
        json(res, 200, { jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: session }] } });
      },
    });
    const c = connection(server.url);
    expect(await c.request("tools/call", { name: "t", arguments: {} })).toMatchObject({
      content: [{ text: "s-1" }],
    });
    server.forgetSessions(); // the upstream restarted
    expect(await c.request("tools/call", { name: "t", arguments: {} })).toMatchObject({
      content: [{ text: "s-2" }],
    });
    const calls = server.seen.filter((s) => (s.body as Rpc | undefined)?.method === "tools/call");
    expect(calls.map((s) => s.headers["mcp-session-id"])).toEqual(["s-1", "s-1", "s-2"]);
  });

  const sessionsOf = (seen: Seen[], method: string) =>
    seen
      .filter((s) => (s.body as Rpc | undefined)?.method === method)
      .map((s) => s.headers["mcp-session-id"]);

  test("a 200 JSON-RPC error saying our session is unknown, confirmed by a ping refused the same way, is session gone: a new session, the call sent again", async () => {
    const server = await mcpServer({
      call: (m, res, session) => {
        if (!server.live.has(session))
          return json(res, 200, {
            jsonrpc: "2.0",
            id: m.id,
            error: { code: -32600, message: "Unknown session" },
          });
        if (m.method !== "tools/call")
          return json(res, 200, {
            jsonrpc: "2.0",
            id: m.id,
            result: m.method === "ping" ? {} : { tools: [] },
          });
        json(res, 200, { jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: session }] } });
      },
    });
    const c = connection(server.url);
    expect(await c.request("tools/call", { name: "t", arguments: {} })).toMatchObject({
      content: [{ text: "s-1" }],
    });
    server.forgetSessions(); // the upstream restarted, and answers stale sessions with HTTP 200
    expect(await c.request("tools/call", { name: "t", arguments: {} })).toMatchObject({
      content: [{ text: "s-2" }],
    });
    expect(sessionsOf(server.seen, "tools/call")).toEqual(["s-1", "s-1", "s-2"]);
    expect(sessionsOf(server.seen, "ping")).toEqual(["s-1"]);
  });

  test("a 200 JSON-RPC error naming a session, from a session the upstream still answers pings on, is its own answer: delivered, not sent again", async () => {
    const server = await mcpServer({
      call: (m, res) => {
        if (m.method !== "tools/call")
          return json(res, 200, {
            jsonrpc: "2.0",
            id: m.id,
            result: m.method === "ping" ? {} : { tools: [] },
          });
        // A tool about sessions of its own (a browser's, a database's): this is its real answer.
        json(res, 200, {
          jsonrpc: "2.0",
          id: m.id,
          error: { code: -32602, message: "Unknown session: browser-7 is closed" },
        });
      },
    });
    const c = connection(server.url);
    const err = (await c.request("tools/call", { name: "t", arguments: {} }).catch((e: unknown) => e)) as {
      code: number;
      message: string;
    };
    expect(err).not.toBeInstanceOf(SessionGoneError);
    expect(err.code).toBe(-32602);
    expect(err.message).toBe("Unknown session: browser-7 is closed");
    expect(sessionsOf(server.seen, "tools/call")).toEqual(["s-1"]);
    expect(sessionsOf(server.seen, "initialize")).toHaveLength(1);
  });

  test("a request whose answer stream broke off is not sent again", async () => {
    const server = await mcpServer({
      call: (m, res) => {
        if (m.method !== "tools/call")
          return json(res, 200, { jsonrpc: "2.0", id: m.id, result: { tools: [] } });
        sseStart(res);
        sseSend(res, {
          jsonrpc: "2.0",
          method: "notifications/message",
          params: { level: "info", data: "x" },
        });
        res.end();
      },
    });
    const c = connection(server.url);
    const err = await c.request("tools/call", { name: "t", arguments: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamBrokenError);
    expect((err as Error).message).toMatch(/answer ended before the response to tools\/call/);
    const calls = server.seen.filter((s) => (s.body as Rpc | undefined)?.method === "tools/call");
    expect(calls).toHaveLength(1);
  });
});

describe("endpoints that do not speak MCP give one short line", () => {
  const page = `<!doctype html><html><head><title>Welcome to nginx!</title></head><body>${"<p>lorem ipsum</p>\n".repeat(500)}</body></html>`;
  const cases: [string, string, Handle, RegExp][] = [
    [
      "an HTML page",
      "/mcp",
      (_q, res) => raw(res, 200, "text/html; charset=utf-8", page),
      /^the server answered text\/html, not MCP over Streamable HTTP; it may be a web page, or an SSE-only server/,
    ],
    [
      "text/plain",
      "/mcp",
      (_q, res) => raw(res, 200, "text/plain", "hello\nworld"),
      /the server answered text\/plain, not MCP over Streamable HTTP: hello world$/,
    ],
    [
      "an SSE-only server's endpoint",
      "/sse",
      (_q, res) => raw(res, 404, "text/html", "<html><body><pre>Cannot POST /sse</pre></body></html>"),
      /no MCP endpoint at \/sse \(404 Not Found\); it may be an SSE-only server \(the older HTTP\+SSE transport\)/,
    ],
    [
      "JSON that is not JSON-RPC",
      "/mcp",
      (_q, res) => json(res, 200, { hello: "world" }),
      /the server answered application\/json, not MCP over Streamable HTTP: \{"hello":"world"\}$/,
    ],
    [
      "a server that refuses POST",
      "/mcp",
      (_q, res) => raw(res, 405, undefined),
      /does not take POST at \/mcp \(405\); it may be an SSE-only server/,
    ],
    [
      "a 401 without a body",
      "/mcp",
      (_q, res) => raw(res, 401, undefined),
      /^the server refused access \(401 Unauthorized\); check the upstream's headers \(credentials\)$/,
    ],
    [
      "a 403 without a body",
      "/mcp",
      (_q, res) => raw(res, 403, undefined),
      /the server refused access \(403 Forbidden\)/,
    ],
    [
      "a redirect to a login page elsewhere",
      "/mcp",
      (_q, res) =>
        raw(res, 302, "text/html", page, { location: "https://login.example.com/sso?token=s3cret#x" }),
      /^the server redirected POST to https:\/\/login\.example\.com\/sso \(302\); set the upstream's url to that address$/,
    ],
  ];
  test.each(cases)("%s", async (_name, path, handle, reason) => {
    const server = await httpServer(handle);
    const { ready } = await connectClient(new URL(path, server.url));
    const err = (await ready.catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(UpstreamHttpError);
    expect(err.message).toMatch(reason);
    expect(err.message).not.toMatch(/\n|<|lorem|s3cret/);
    expect(err.message.length).toBeLessThan(300);
  });

  test("through toolpacks serve, /toolsets and the log give the reason in one line, not the page", async () => {
    const server = await httpServer((_q, res) => raw(res, 200, "text/html", page));
    const dir = tempDir();
    cleanups.push(() => dir.cleanup());
    const served = await serve([dir.file("p.yaml", `upstreams:\n  site: { url: "${server.url}" }\n`)]);
    cleanups.push(() => served.stop());
    const client = await httpClient(served.url());
    cleanups.push(() => client.close());
    const report = (await (await fetch(`${served.base}/toolsets`)).json()) as {
      unavailable: { name: string; reason: string; detail: string }[];
    };
    expect(report.unavailable).toEqual([
      expect.objectContaining({
        name: "site",
        reason: "upstream-unavailable",
        detail:
          "site: the server answered text/html, not MCP over Streamable HTTP; it may be a web page, or an SSE-only server (the older HTTP+SSE transport), which toolpacks does not speak",
      }),
    ]);
    expect(served.stderr()).not.toMatch(/lorem|<p>/);
  });

  test("a same-origin 307 is followed with the same method and body", async () => {
    const server = await httpServer((req, res, body) => {
      if (req.url === "/old") return raw(res, 307, undefined, "", { location: "/mcp" });
      const m = body as Rpc;
      if (m?.method === "initialize") return json(res, 200, initResult(m.id), { "mcp-session-id": "r-1" });
      raw(res, req.method === "GET" ? 405 : 202, undefined);
    });
    const { transport, ready } = await connectClient(new URL("/old", server.url));
    await ready;
    expect(transport.sessionId).toBe("r-1");
    expect(server.seen.filter((s) => s.path === "/mcp" && s.method === "POST").length).toBeGreaterThanOrEqual(
      2,
    );
  });
});

describe("the transport's own bookkeeping", () => {
  test("close aborts a call in flight, and the call fails", async () => {
    let callSeen: IncomingMessage | undefined;
    let aborted = false;
    const server = await httpServer((req, res, body) => {
      const m = body as Rpc;
      if (req.method === "GET") return raw(res, 405, undefined);
      if (m?.method === "initialize") return json(res, 200, initResult(m.id), { "mcp-session-id": "c-1" });
      if (m?.method === "tools/call") {
        sseStart(res);
        callSeen = req;
        res.once("close", () => {
          aborted = true;
        });
        return;
      }
      raw(res, 202, undefined);
    });
    const { transport, client, ready } = await connectClient(server.url);
    await ready;
    const pending = callTool(client).catch((e: unknown) => e);
    await until(() => callSeen, "the call at the server");
    await transport.close();
    expect(await pending).toBeInstanceOf(Error);
    await until(() => aborted, "the call's stream closed at the server");
  });

  test("protocol junk reaches onerror, and the answer after it still arrives", async () => {
    const server = await mcpServer({
      call: (m, res) => {
        sseStart(res);
        res.write("data: <html>oops</html>\n\n");
        res.write(`data: ${JSON.stringify({ hello: "world" })}\n\n`);
        sseSend(res, { jsonrpc: "2.0", id: m.id, result: { ok: true } });
        res.end();
      },
    });
    const { transport, client, ready } = await connectClient(server.url);
    await ready;
    const errors: Error[] = [];
    const sdk = transport.onerror;
    transport.onerror = (e) => {
      errors.push(e);
      sdk?.(e);
    };
    expect(await callTool(client)).toMatchObject({ ok: true });
    expect(errors.map((e) => e.message)).toEqual([
      "upstream web sent something that is not JSON: <html>oops</html>",
      'upstream web sent something that is not JSON-RPC 2.0: {"hello":"world"}',
    ]);
  });

  test("a batch's answers all arrive, tied to no single request", async () => {
    const server = await httpServer((_req, res, body) => {
      const batch = body as Rpc[];
      json(
        res,
        200,
        batch.map((m) => ({ jsonrpc: "2.0", id: m.id, result: { n: m.id } })),
      );
    });
    const transport = new HttpClientTransport(server.url);
    cleanups.push(() => transport.close());
    const got: { m: Rpc; extra: unknown }[] = [];
    transport.onmessage = (m, extra) => got.push({ m: m as Rpc, extra });
    await transport.start();
    await transport.send([
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { jsonrpc: "2.0", id: 2, method: "ping" },
    ]);
    expect(got).toEqual([
      { m: { jsonrpc: "2.0", id: 1, result: { n: 1 } }, extra: undefined },
      { m: { jsonrpc: "2.0", id: 2, result: { n: 2 } }, extra: undefined },
    ]);
  });
});
