/** Telling a 2026-07-28 POST from a 2025 one, and checking its mirrored headers (src/modern/classify.ts, headers.ts). */
import { createMcpHandler, fromJsonSchema, McpServer } from "@modelcontextprotocol/server";
import { afterAll, describe, expect, test } from "vitest";
import { type Classified, classifyPost, type Headers, legacyRefused } from "../../src/modern/classify.js";
import { checkParamHeaders, checkStandardHeaders, scanParamHeaders } from "../../src/modern/headers.js";

const V = "io.modelcontextprotocol/protocolVersion";
const C = "io.modelcontextprotocol/clientCapabilities";
const meta = { [V]: "2026-07-28", [C]: {} };
const std = { "mcp-protocol-version": "2026-07-28" };
const call = (name: string, args: unknown, m: object = meta) => ({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name, arguments: args, _meta: m },
});
const list = (m: unknown = meta) => ({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: m } });

const REGIONAL = {
  type: "object",
  properties: {
    region: { type: "string", "x-mcp-header": "Region" },
    n: { type: "integer", "x-mcp-header": "N" },
  },
};

/** Our whole pipeline for one POST: classify, then the standard headers, then Mcp-Param-* for tools/call. */
function ours(headers: Headers, body: unknown): { status: number; code?: number } | "2025" | "serve" {
  const c: Classified = classifyPost(headers, body);
  if (c.era === "2025") return "2025";
  if (c.era === "refused") return { status: c.refusal.status ?? 200, code: c.refusal.code };
  if (c.kind === "notification") return "serve";
  const b = body as { method: string; params?: { name?: string; arguments?: unknown } };
  const bad = checkStandardHeaders(headers, b);
  if (bad) return { status: bad.status ?? 200, code: bad.code };
  if (b.method === "tools/call" && b.params?.name === "regional") {
    const scan = scanParamHeaders(REGIONAL);
    const p = scan.ok ? checkParamHeaders(headers, scan.params, b.params.arguments) : undefined;
    if (p) return { status: p.status ?? 200, code: p.code };
  }
  return "serve";
}

const CASES: [string, Record<string, string>, unknown][] = [
  ["a 2026 request with every header", { ...std, "mcp-method": "tools/list" }, list()],
  ["no MCP-Protocol-Version header", { "mcp-method": "tools/list" }, list()],
  ["no Mcp-Method header", std, list()],
  ["Mcp-Method naming another method", { ...std, "mcp-method": "prompts/list" }, list()],
  ["Mcp-Method in another case", { ...std, "mcp-method": "TOOLS/LIST" }, list()],
  [
    "a version header disagreeing with _meta",
    { "mcp-protocol-version": "2025-11-25", "mcp-method": "tools/list" },
    list(),
  ],
  [
    "an unknown version in both",
    { "mcp-protocol-version": "1900-01-01", "mcp-method": "tools/list" },
    list({ ...meta, [V]: "1900-01-01" }),
  ],
  [
    "a 2025 version in _meta",
    { "mcp-method": "tools/list", "mcp-protocol-version": "2025-11-25" },
    list({ ...meta, [V]: "2025-11-25" }),
  ],
  ["_meta without clientCapabilities", { ...std, "mcp-method": "tools/list" }, list({ [V]: "2026-07-28" })],
  [
    "a modern header on a claim-less request",
    { ...std, "mcp-method": "tools/list" },
    { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
  ],
  [
    "a modern header on initialize",
    std,
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "c", version: "1" } },
    },
  ],
  [
    "a 2026 notification",
    { ...std, "mcp-method": "notifications/cancelled" },
    { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } },
  ],
  ["tools/call without Mcp-Name", { ...std, "mcp-method": "tools/call" }, call("regional", {})],
  [
    "Mcp-Name naming another tool",
    { ...std, "mcp-method": "tools/call", "mcp-name": "other" },
    call("regional", {}),
  ],
  [
    "Mcp-Name with spaces around it",
    { ...std, "mcp-method": "tools/call", "mcp-name": "  regional  " },
    call("regional", {}),
  ],
  [
    "Mcp-Name base64-encoded",
    { ...std, "mcp-method": "tools/call", "mcp-name": "=?base64?cmVnaW9uYWw=?=" },
    call("regional", {}),
  ],
  [
    "Mcp-Name with bad base64",
    { ...std, "mcp-method": "tools/call", "mcp-name": "=?base64?cmVnaW9uYWw?=" },
    call("regional", {}),
  ],
  [
    "Mcp-Param-Region matching",
    { ...std, "mcp-method": "tools/call", "mcp-name": "regional", "mcp-param-region": "eu" },
    call("regional", { region: "eu" }),
  ],
  [
    "Mcp-Param-Region missing",
    { ...std, "mcp-method": "tools/call", "mcp-name": "regional" },
    call("regional", { region: "eu" }),
  ],
  [
    "Mcp-Param-Region differing",
    { ...std, "mcp-method": "tools/call", "mcp-name": "regional", "mcp-param-region": "us" },
    call("regional", { region: "eu" }),
  ],
  [
    "Mcp-Param-Region for a null value",
    { ...std, "mcp-method": "tools/call", "mcp-name": "regional" },
    call("regional", { region: null }),
  ],
  [
    "Mcp-Param-N 42.0 for 42",
    { ...std, "mcp-method": "tools/call", "mcp-name": "regional", "mcp-param-n": "42.0" },
    call("regional", { n: 42 }),
  ],
  [
    "Mcp-Param-Region base64 of non-ASCII",
    { ...std, "mcp-method": "tools/call", "mcp-name": "regional", "mcp-param-region": "=?base64?5LiW55WM?=" },
    call("regional", { region: "世界" }),
  ],
];

describe("classification agrees with the SDK's createMcpHandler", () => {
  const handler = createMcpHandler(() => {
    const s = new McpServer({ name: "t", version: "1" });
    s.registerTool("regional", { inputSchema: fromJsonSchema(REGIONAL) }, async () => ({ content: [] }));
    s.registerTool("other", { inputSchema: fromJsonSchema({ type: "object" }) }, async () => ({
      content: [],
    }));
    return s;
  });
  afterAll(() => handler.close());

  test.each(CASES)("%s", async (_name, headers, body) => {
    const res = await handler.fetch(
      new Request("http://127.0.0.1/mcp", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers,
        },
        body: JSON.stringify(body),
      }),
    );
    const text = await res.text();
    const code = /"error":\{"code":(-?\d+)/.exec(text)?.[1];
    const mine = ours(headers, body);
    if (mine === "2025" || mine === "serve") {
      expect([200, 202], text).toContain(res.status);
      if (code) expect(Number(code), text).toBeGreaterThan(-32020); // a handler error, not a refusal
    } else {
      expect({ status: res.status, code: Number(code) }, text).toEqual(mine);
    }
  });
});

describe("classifyPost: 2025 traffic stays 2025", () => {
  test.each([
    [
      "initialize",
      { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25" } },
      "initialize",
    ],
    ["a claim-less request", { jsonrpc: "2.0", id: 2, method: "tools/list" }, "no-claim"],
    [
      "a claim-less request with a 2025 header",
      { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} },
      "no-claim",
    ],
    ["a posted response", { jsonrpc: "2.0", id: 0, result: {} }, "response"],
    ["a batch of 2025 messages", [{ jsonrpc: "2.0", method: "notifications/initialized" }], "batch"],
    ["a 2025 notification", { jsonrpc: "2.0", method: "notifications/initialized" }, "notification"],
  ])("%s", (_name, body, reason) => {
    expect(classifyPost({ "mcp-protocol-version": "2025-11-25" }, body)).toEqual({ era: "2025", reason });
  });

  test("an envelope-claiming request inside a batch is refused (-32600)", () => {
    const c = classifyPost({}, [list(), { jsonrpc: "2.0", method: "notifications/initialized" }]);
    expect(c.era === "refused" && [c.refusal.status, c.refusal.code]).toEqual([400, -32600]);
  });

  test.each([
    ["an empty batch", []],
    ["a string", "hello"],
    ["jsonrpc 1.0", { jsonrpc: "1.0", id: 1, method: "x" }],
    ["a null id", { jsonrpc: "2.0", id: null, method: "x" }],
    ["array params", { jsonrpc: "2.0", id: 1, method: "x", params: [] }],
  ])("%s is an invalid request", (_name, body) => {
    const c = classifyPost({}, body);
    expect(c.era === "refused" && c.refusal.code).toBe(-32600);
  });

  test("a 2026 request keeps its envelope, read once", () => {
    const c = classifyPost(std, list({ ...meta, "io.modelcontextprotocol/logLevel": "info" }));
    expect(c).toEqual({
      era: "2026-07-28",
      kind: "request",
      envelope: { protocolVersion: "2026-07-28", clientCapabilities: {}, logLevel: "info" },
    });
  });

  test("an unsupported version lists the 2025 versions the proxy also serves", () => {
    const c = classifyPost({}, list({ ...meta, [V]: "2027-01-01" }), {
      legacy: ["2025-11-25", "2025-06-18"],
    });
    expect(c.era === "refused" && c.refusal.data).toEqual({
      supported: ["2026-07-28", "2025-11-25", "2025-06-18"],
      requested: "2027-01-01",
    });
  });

  test("a 2026-only endpoint answers initialize with -32022 naming what it serves", () => {
    expect(legacyRefused({ method: "initialize", params: { protocolVersion: "2025-06-18" } })).toMatchObject({
      status: 400,
      code: -32022,
      data: { supported: ["2026-07-28"], requested: "2025-06-18" },
    });
  });
});
