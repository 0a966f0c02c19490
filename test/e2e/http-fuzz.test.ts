/** Hostile HTTP at the real CLI: random JSON-RPC bodies, wrong methods and types, oversized bodies and queries. */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { FIXTURE, httpClient, type Served, serve, tempDir, toolNames } from "../helpers/proc.js";
import { MCP_HEADERS, type Message, messagesOf, openSession, post, request } from "../helpers/wire.js";

const tmp = tempDir();
const config = tmp.file(
  "packs.yaml",
  `
name: fuzz-target
upstreams:
  main:
    command: node
    args: ["${FIXTURE}"]
toolsets:
  core:
    tools: [main/echo, main/fail, main/throw, main/add, main/with_meta]
`,
);

let served: Served;
let small: Served;
let session: string;
const clients: Client[] = [];

beforeAll(async () => {
  [served, small] = await Promise.all([serve([config]), serve([config, "--max-body-bytes", "1024"])]);
  session = (await openSession(served.url())).session;
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await Promise.all([served?.stop(), small?.stop()]);
  tmp.cleanup();
});

/** What a hostile request may get back; anything else (or no answer, or a reset) is a bug. */
const SANE = [200, 202, 400, 404, 405, 406, 413, 415];
/** Liveness only: a request still unanswered after this long is taken as never answered. */
const NO_ANSWER_MS = 20_000;

interface Shot {
  readonly method: string;
  readonly body?: string;
  readonly contentType: string;
  readonly session: "valid" | "none" | "unknown";
}

interface Answer {
  readonly status: number;
  readonly contentType: string | null;
  readonly text: string;
}

async function fire(shot: Shot): Promise<Answer> {
  const headers: Record<string, string> = { ...MCP_HEADERS, "content-type": shot.contentType };
  if (shot.session === "valid") headers["mcp-session-id"] = session;
  if (shot.session === "unknown") headers["mcp-session-id"] = "00000000-0000-0000-0000-000000000000";
  const res = await fetch(served.url(), {
    method: shot.method,
    headers,
    ...(shot.body !== undefined ? { body: shot.body } : {}),
    signal: AbortSignal.timeout(NO_ANSWER_MS),
  });
  return { status: res.status, contentType: res.headers.get("content-type"), text: await res.text() };
}

/** A refusal: a JSON-RPC error object with id null (nothing was read far enough to know the id). */
function expectRpcErrorBody(a: Answer): Message {
  expect(a.contentType, a.text).toMatch(/application\/json/);
  const body = JSON.parse(a.text) as Message;
  expect(body).toMatchObject({
    jsonrpc: "2.0",
    error: { code: expect.any(Number), message: expect.any(String) },
  });
  expect(Number.isInteger(body.error!.code)).toBe(true);
  expect("id" in body).toBe(true);
  return body;
}

/** Checks an answer against the body that was sent. */
function expectSane(shot: Shot, a: Answer): void {
  const label = `${shot.method} ${shot.session} ${shot.contentType} ${String(shot.body).slice(0, 300)} → ${a.status} ${a.text.slice(0, 300)}`;
  expect(SANE, label).toContain(a.status);
  if (a.status >= 400) {
    expectRpcErrorBody(a);
    return;
  }
  let sent: unknown;
  try {
    sent = JSON.parse(shot.body ?? "");
  } catch {
    throw new Error(`invalid JSON was accepted: ${label}`);
  }
  const list = (Array.isArray(sent) ? sent : [sent]) as Message[];
  const requests = list.filter((m) => "method" in m && "id" in m);
  if (a.status === 202) {
    expect(requests, label).toEqual([]);
    expect(a.text).toBe("");
    return;
  }
  // 200: every request answered once, by id, with a result or an error; SSE may carry notifications too.
  const messages = messagesOf(a.contentType, a.text);
  if (!a.contentType?.includes("text/event-stream"))
    expect(Array.isArray(JSON.parse(a.text)), label).toBe(Array.isArray(sent));
  const answers = messages.filter((m) => !("method" in m));
  for (const m of answers) {
    expect(m.jsonrpc, label).toBe("2.0");
    expect("result" in m !== "error" in m, label).toBe(true);
    if (m.error) {
      expect(Number.isInteger(m.error.code), label).toBe(true);
      expect(typeof m.error.message, label).toBe("string");
    }
  }
  expect(answers.map((m) => JSON.stringify(m.id)).sort(), label).toEqual(
    requests.map((m) => JSON.stringify(m.id)).sort(),
  );
}

// ---------------------------------------------------------------------------------------------------------
// Bodies

const METHODS = [
  "ping",
  "tools/list",
  "tools/call",
  "prompts/list",
  "prompts/get",
  "resources/list",
  "resources/read",
  "resources/templates/list",
  "resources/subscribe",
  "completion/complete",
  "logging/setLevel",
  "sampling/createMessage",
  "notifications/initialized",
  "notifications/cancelled",
  "notifications/progress",
  "notifications/roots/list_changed",
  "__proto__",
  "constructor",
  "",
];
const method = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...METHODS) },
  { weight: 1, arbitrary: fc.string() },
);
/** Ids the protocol allows (string or integer). */
const goodId = fc.oneof(fc.integer(), fc.string({ maxLength: 12 }));
/** Ids it does not. */
const badId = fc.oneof(
  fc.constant(null),
  fc.double(),
  fc.boolean(),
  fc.object({ maxDepth: 1 }),
  fc.array(fc.integer()),
);

const toolCall = fc.record(
  {
    name: fc.oneof(
      fc.constantFrom(
        "echo",
        "fail",
        "throw",
        "add",
        "with_meta",
        "list_server_toolsets",
        "slow",
        "nope",
        "",
      ),
      fc.string(),
    ),
    arguments: fc.oneof(
      fc.record({ text: fc.oneof(fc.string(), fc.jsonValue()) }),
      fc.record({ a: fc.oneof(fc.integer(), fc.jsonValue()), b: fc.integer() }),
      fc.object(),
    ),
  },
  { requiredKeys: ["name"] },
);
/** params a request may carry: absent, or an object. */
const goodParams = fc.oneof(fc.constant(undefined), fc.object({ maxDepth: 2 }), toolCall);
const anyParams = fc.oneof(goodParams, fc.jsonValue());

const message = (id: fc.Arbitrary<unknown>, params: fc.Arbitrary<unknown>) =>
  fc.oneof(
    {
      weight: 5,
      arbitrary: fc.record(
        { jsonrpc: fc.constant("2.0"), id, method, params },
        { requiredKeys: ["jsonrpc", "id", "method"] },
      ),
    },
    {
      weight: 2,
      arbitrary: fc.record(
        { jsonrpc: fc.constant("2.0"), method, params },
        { requiredKeys: ["jsonrpc", "method"] },
      ),
    },
    { weight: 1, arbitrary: fc.record({ jsonrpc: fc.constant("2.0"), id, result: fc.jsonValue() }) },
    {
      weight: 1,
      arbitrary: fc.record({
        jsonrpc: fc.constant("2.0"),
        id,
        error: fc.record({ code: fc.integer(), message: fc.string() }),
      }),
    },
  );

/** Well-formed messages (the SDK can parse each of them), alone or in a batch with distinct ids. */
const wellFormed = fc.oneof(
  { weight: 4, arbitrary: message(goodId, goodParams) },
  {
    weight: 2,
    arbitrary: fc.uniqueArray(message(goodId, goodParams), {
      minLength: 1,
      maxLength: 4,
      selector: (m) => JSON.stringify("id" in m ? m.id : m),
    }),
  },
);

/** The fixture echoes; a body of up to ~3.5 MiB (the limit is 4 MiB) comes back whole. */
const hugeEcho = fc.tuple(fc.integer({ min: 1, max: 3_500_000 }), goodId).map(([n, id]) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "echo", arguments: { text: "x".repeat(n) } },
  }),
);

const invalidJson = fc.oneof(
  fc.string().filter((s) => {
    try {
      JSON.parse(s);
      return false;
    } catch {
      return true;
    }
  }),
  fc
    .tuple(fc.jsonValue(), fc.nat())
    .map(([v, k]) => JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: v }).slice(0, k % 40)),
  fc.constantFrom(
    "",
    " ",
    "\u0000",
    "{",
    "[",
    "]",
    "{}}",
    '{"jsonrpc":"2.0",}',
    "\uFEFF{}",
    "NaN",
    "undefined",
  ),
  fc.integer({ min: 1000, max: 2_000_000 }).map((n) => "[".repeat(n)),
);

/** Anything at all: wrong versions, wrong types, any ids, any params, any JSON. */
const hostileJson = fc.oneof(
  fc.jsonValue(),
  message(fc.oneof(goodId, badId), anyParams),
  fc.array(message(fc.oneof(goodId, badId), anyParams), { maxLength: 5 }),
  fc.record({ jsonrpc: fc.oneof(fc.constant("1.0"), fc.jsonValue()), id: goodId, method }),
  fc.record({ id: goodId, method }),
  fc.array(fc.jsonValue(), { maxLength: 3 }),
);

const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant("application/json") },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "application/json; charset=utf-8",
      "text/plain",
      "",
      "application/x-www-form-urlencoded",
      "APPLICATION/JSON",
    ),
  },
);

/** With the live session: the session must survive everything, so nothing here ends it (no DELETE, no GET). */
const withSession: fc.Arbitrary<Shot> = fc.oneof(
  {
    weight: 12,
    arbitrary: wellFormed.map((b) => ({
      method: "POST",
      body: JSON.stringify(b),
      contentType: "application/json",
      session: "valid" as const,
    })),
  },
  {
    weight: 1,
    arbitrary: hugeEcho.map((body) => ({
      method: "POST",
      body,
      contentType: "application/json",
      session: "valid" as const,
    })),
  },
  {
    weight: 2,
    arbitrary: invalidJson.map((body) => ({
      method: "POST",
      body,
      contentType: "application/json",
      session: "valid" as const,
    })),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(wellFormed, contentType).map(([b, t]) => ({
      method: "POST",
      body: JSON.stringify(b),
      contentType: t,
      session: "valid" as const,
    })),
  },
);

/** Without a session, or with one the server never issued: refused before any MCP is spoken. */
const withoutSession: fc.Arbitrary<Shot> = fc
  .record({
    method: fc.oneof(
      { weight: 8, arbitrary: fc.constant("POST") },
      { weight: 1, arbitrary: fc.constantFrom("PUT", "PATCH", "GET", "DELETE", "OPTIONS") },
    ),
    body: fc.oneof(
      { weight: 6, arbitrary: hostileJson.map((v) => JSON.stringify(v)) },
      { weight: 2, arbitrary: invalidJson },
    ),
    contentType,
    session: fc.constantFrom("none" as const, "unknown" as const),
  })
  .map(
    (s): Shot =>
      s.method === "GET" || s.method === "DELETE"
        ? { method: s.method, contentType: s.contentType, session: s.session }
        : s,
  )
  // initialize opens a session whatever the header says; random ones are fuzzed with the session above.
  .filter((s) => !s.body?.includes('"initialize"'));

/** A random initialize: opens a session or is refused, never anything else. */
const randomInitialize: fc.Arbitrary<Shot> = fc
  .record(
    {
      protocolVersion: fc.oneof(fc.constantFrom("2025-11-25", "2025-06-18", "1999-01-01"), fc.string()),
      capabilities: fc.object({ maxDepth: 1 }),
      clientInfo: fc.oneof(fc.record({ name: fc.string(), version: fc.string() }), fc.jsonValue()),
    },
    { requiredKeys: [] },
  )
  .chain((params) =>
    fc.tuple(goodId, fc.boolean()).map(([id, batch]) => {
      const m = { jsonrpc: "2.0", id, method: "initialize", params };
      return {
        method: "POST",
        body: JSON.stringify(batch ? [m] : m),
        contentType: "application/json",
        session: "none" as const,
      };
    }),
  );

async function expectStillServing(): Promise<void> {
  expect(served.proc.exitCode).toBeNull();
  const health = await fetch(`${served.base}/healthz`);
  expect(health.status).toBe(200);
  expect(await health.json()).toMatchObject({ ok: true });
  // The session the fuzz hammered still works.
  const { answer } = await request(served.url(), session, "still-alive", "tools/call", {
    name: "echo",
    arguments: { text: "ok" },
  });
  expect(answer.result).toEqual({ content: [{ type: "text", text: "ok" }] });
  // And a real SDK client can still connect and call.
  const c = await httpClient(served.url());
  clients.push(c);
  expect(await toolNames(c)).toContain("echo");
  expect(await c.callTool({ name: "echo", arguments: { text: "after the fuzz" } })).toEqual({
    content: [{ type: "text", text: "after the fuzz" }],
  });
}

describe("random bodies at POST /mcp", () => {
  test("a hostile body never crashes the server nor hangs, and gets a JSON-RPC answer", async () => {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          { weight: 5, arbitrary: withSession },
          { weight: 4, arbitrary: withoutSession },
          { weight: 1, arbitrary: randomInitialize },
        ),
        async (shot) => {
          const answer = await fire(shot);
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          expectSane(shot, answer);
        },
      ),
      { numRuns: Number(process.env.HTTP_FUZZ_RUNS ?? 300), endOnFailure: true },
    );
    console.log("http fuzz: answers by status", Object.fromEntries([...statuses].sort(([a], [b]) => a - b)));
    // The fuzz must have reached the MCP layer, not only the refusals in front of it.
    expect(statuses.get(200)).toBeGreaterThan(0);
    expect(statuses.get(202)).toBeGreaterThan(0);
    await expectStillServing();
  });
});

describe("the edges, one by one", () => {
  test("a body over the limit is answered 413, not a reset connection", async () => {
    // 2 MB with a Content-Length against --max-body-bytes 1024: the client must read the status.
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "ping",
      params: { pad: "y".repeat(2_000_000) },
    });
    const res = await fetch(small.url(), { method: "POST", headers: MCP_HEADERS, body });
    expect(res.status).toBe(413);
    expect(
      expectRpcErrorBody({
        status: 413,
        contentType: res.headers.get("content-type"),
        text: await res.text(),
      }).error!.message,
    ).toMatch(/1024 bytes/);
    // The server is fine afterwards.
    expect((await openSession(small.url())).session).toBeTruthy();
  });

  test("a body just under the limit is read, not refused as too large", async () => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }).padEnd(1024, " ");
    const res = await post(small.url(), body);
    expect(res.status).toBe(400); // no session: the body was read and parsed
    expect(res.messages[0]!.error!.message).toMatch(/Mcp-Session-Id/);
  });

  test.each([
    [
      "invalid JSON is a parse error",
      { body: '{"jsonrpc": "2.0", "id": 1,', type: "application/json" },
      400,
      -32700,
    ],
    ["an empty body is a parse error", { body: "", type: "application/json" }, 400, -32700],
    [
      "text/plain is refused with 415",
      { body: '{"jsonrpc":"2.0","id":1,"method":"ping"}', type: "text/plain" },
      415,
      -32000,
    ],
    ["an empty batch is refused", { body: "[]", type: "application/json" }, 400, -32600],
    [
      "a JSON-RPC 1.0 message is refused",
      { body: '{"jsonrpc":"1.0","id":1,"method":"ping"}', type: "application/json" },
      400,
      -32600,
    ],
    [
      "a request without a session is refused",
      { body: '{"jsonrpc":"2.0","id":1,"method":"ping"}', type: "application/json" },
      400,
      -32000,
    ],
  ])("%s", async (_bug, { body, type }, status, code) => {
    const res = await fetch(served.url(), {
      method: "POST",
      headers: { ...MCP_HEADERS, "content-type": type },
      body,
    });
    expect(res.status).toBe(status);
    expect(
      expectRpcErrorBody({ status, contentType: res.headers.get("content-type"), text: await res.text() })
        .error!.code,
    ).toBe(code);
  });

  test("an unknown session is answered 404 with -32001", async () => {
    const res = await post(
      served.url(),
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { session: "no-such-session" },
    );
    expect(res.status).toBe(404);
    expect(res.messages[0]!.error!.code).toBe(-32001);
  });

  test.each(["PUT", "PATCH"])("%s on the MCP path is refused with 405", async (m) => {
    const res = await fetch(served.url(), { method: m, headers: MCP_HEADERS, body: "{}" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toMatch(/POST/);
    expectRpcErrorBody({ status: 405, contentType: res.headers.get("content-type"), text: await res.text() });
  });

  test("a GET without Accept: text/event-stream is refused with 406", async () => {
    const res = await fetch(served.url(), { headers: { "mcp-session-id": session } });
    expect(res.status).toBe(406);
    expectRpcErrorBody({ status: 406, contentType: res.headers.get("content-type"), text: await res.text() });
  });

  test("a query with 5,000 names, or an over-long one, is refused with 400", async () => {
    // One-letter names keep the URL under Node's 16 KiB header limit, so the query rules are what answers.
    const names = Array.from({ length: 5000 }, (_, i) => "abcdefghijklmnopqrstuvwxyz"[i % 26]!);
    for (const query of [names.join("&"), `toolsets=${names.slice(0, 300).join(",")}`]) {
      const res = await post(
        served.url(query),
        JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-11-25",
            capabilities: {},
            clientInfo: { name: "q", version: "1" },
          },
        }),
      );
      expect(res.status).toBe(400);
      expect(res.headers.get("mcp-session-id")).toBeNull();
      expect(res.messages[0]!.error!.message).toMatch(/query string too long|too many toolset names/);
      const report = await fetch(`${served.base}/toolsets?${query}`);
      expect(report.status).toBe(400);
      expect(((await report.json()) as { error: string }).error).toMatch(/too long|too many/);
    }
  });

  test("a 100 KB query string gets a 4xx, not a hang", async () => {
    const res = await fetch(served.url(`a=${"b".repeat(100 * 1024)}`), {
      method: "POST",
      headers: MCP_HEADERS,
      body: "{}",
      signal: AbortSignal.timeout(NO_ANSWER_MS),
    });
    await res.arrayBuffer();
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(served.proc.exitCode).toBeNull();
  });
});

describe("HTTP bugs found by the fuzzer", () => {
  test("a request whose id or params the SDK cannot parse is answered 400, not left hanging", async () => {
    const bodies = [
      { jsonrpc: "2.0", id: { a: 1 }, method: "ping" },
      { jsonrpc: "2.0", id: null, method: "ping" },
      { jsonrpc: "2.0", id: true, method: "ping" },
      { jsonrpc: "2.0", id: 1.5, method: "ping" },
      { jsonrpc: "2.0", id: 7, method: 42 },
      { jsonrpc: "2.0", id: 8, method: "tools/call", params: 5 },
      { jsonrpc: "2.0", id: 9, method: "tools/list", params: null },
      {
        jsonrpc: "2.0",
        id: 10,
        method: "tools/call",
        params: { name: "echo", arguments: { text: "a" }, _meta: { progressToken: {} } },
      },
    ];
    const answers = await Promise.all(
      bodies.map((b) =>
        post(served.url(), b, { session, signal: AbortSignal.timeout(5000) }).then(
          (r) => r.status,
          (e: Error) => e.name,
        ),
      ),
    );
    expect(answers).toEqual(bodies.map(() => 400));
  });

  test("a chunked body over the limit gets a readable 413, not EPIPE/ECONNRESET", async () => {
    // No Content-Length: the limit is found while the client is still sending; the server answers and closes.
    const outcomes: (number | string)[] = [];
    for (let i = 0; i < 8; i++) {
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          for (let k = 0; k < 32; k++) c.enqueue(new Uint8Array(65536).fill(0x78));
          c.close();
        },
      });
      outcomes.push(
        await fetch(small.url(), {
          method: "POST",
          headers: MCP_HEADERS,
          body,
          duplex: "half",
        } as RequestInit).then(
          async (r) => {
            await r.arrayBuffer();
            return r.status;
          },
          (e: Error & { cause?: { code?: string } }) => e.cause?.code ?? e.message,
        ),
      );
    }
    expect(outcomes).toEqual(outcomes.map(() => 413));
  });

  test("a batch with two requests of the same id gets both answers, or is refused", async () => {
    const res = await post(
      served.url(),
      [
        { jsonrpc: "2.0", id: 5, method: "ping" },
        { jsonrpc: "2.0", id: 5, method: "tools/list" },
      ],
      { session },
    );
    if (res.status === 200) expect(res.messages).toHaveLength(2);
    else expect(res.status).toBe(400);
  });

  test("an initialize the SDK refuses leaves no live session behind", async () => {
    const res = await post(served.url(), { jsonrpc: "2.0", id: 1, method: "initialize", params: {} });
    expect(res.messages[0]!.error).toBeDefined();
    const leaked = res.headers.get("mcp-session-id");
    if (leaked) {
      const ping = await post(served.url(), { jsonrpc: "2.0", id: 2, method: "ping" }, { session: leaked });
      expect(ping.status).toBe(404);
    }
  });
});
