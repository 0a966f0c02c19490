/** Mirrored headers of 2026-07-28 POSTs: value encoding, x-mcp-header scanning, building them upstream (src/modern/headers.ts). */
import { describe, expect, test } from "vitest";
import {
  checkParamHeaders,
  decodeHeaderValue,
  encodeHeaderValue,
  requestHeaders,
  scanParamHeaders,
} from "../../src/modern/headers.js";

describe("value encoding (transports/streamable-http §Value encoding)", () => {
  test.each([
    ["us-west1", "us-west1"],
    ["Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="],
    [" padded ", "=?base64?IHBhZGRlZCA=?="],
    ["line1\nline2", "=?base64?bGluZTEKbGluZTI=?="],
    ["=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="],
  ])("the spec's example %j encodes as %s and decodes back", (value, encoded) => {
    expect(encodeHeaderValue(value)).toBe(encoded);
    expect(decodeHeaderValue(encoded)).toBe(value);
  });

  test.each([
    ["=?base64?SGVsbG8?=", "missing padding"],
    ["=?base64?SGVsbG9=?=", "non-canonical trailing bits"],
    ["=?base64?SGV$bG8=?=", "a character outside the alphabet"],
    ["=?base64?SGVsbG8_?=", "base64url instead of base64"],
    ["=?base64?/w==?=", "bytes that are not UTF-8"],
    ["a\u0001b", "a control character in a literal value"],
    ["", "an empty value"],
  ])("%j is refused (%s)", (value) => {
    expect(decodeHeaderValue(value)).toBeUndefined();
  });

  test("a value without the sentinel is literal, even if it looks like base64", () => {
    expect(decodeHeaderValue("SGVsbG8=")).toBe("SGVsbG8=");
  });
});

describe("scanParamHeaders (server/tools §x-mcp-header)", () => {
  test("finds annotations at any depth of 'properties'", () => {
    const scan = scanParamHeaders({
      type: "object",
      properties: {
        region: { type: "string", "x-mcp-header": "Region" },
        opts: { type: "object", properties: { dry: { type: "boolean", "x-mcp-header": "Dry-Run" } } },
      },
    });
    expect(scan).toEqual({
      ok: true,
      params: [
        { path: ["region"], name: "Region", type: "string" },
        { path: ["opts", "dry"], name: "Dry-Run", type: "boolean" },
      ],
    });
  });

  test.each([
    ["on the root", { type: "string", "x-mcp-header": "X" }],
    [
      "under items",
      {
        type: "object",
        properties: { a: { type: "array", items: { type: "string", "x-mcp-header": "X" } } },
      },
    ],
    [
      "under anyOf",
      { type: "object", anyOf: [{ properties: { a: { type: "string", "x-mcp-header": "X" } } }] },
    ],
    ["under $defs", { type: "object", $defs: { d: { type: "string", "x-mcp-header": "X" } } }],
    ["under else", { type: "object", else: { properties: { a: { type: "string", "x-mcp-header": "X" } } } }],
    ["on an object", { type: "object", properties: { a: { type: "object", "x-mcp-header": "X" } } }],
    ["on an untyped property", { type: "object", properties: { a: { "x-mcp-header": "X" } } }],
    ["empty", { type: "object", properties: { a: { type: "string", "x-mcp-header": "" } } }],
    ["with a space", { type: "object", properties: { a: { type: "string", "x-mcp-header": "My Header" } } }],
    [
      "twice, in another case",
      {
        type: "object",
        properties: {
          a: { type: "string", "x-mcp-header": "X" },
          b: { type: "string", "x-mcp-header": "x" },
        },
      },
    ],
  ])("an annotation %s makes the tool invalid", (_name, schema) => {
    expect(scanParamHeaders(schema).ok).toBe(false);
  });
});

describe("checkParamHeaders (§Server behavior for custom headers)", () => {
  const scan = scanParamHeaders({
    type: "object",
    properties: {
      region: { type: "string", "x-mcp-header": "Region" },
      n: { type: "integer", "x-mcp-header": "N" },
    },
  });
  const params = scan.ok ? scan.params : [];

  test.each([
    ["value and matching header", { region: "eu" }, { "mcp-param-region": "eu" }, true],
    ["value without its header", { region: "eu" }, {}, false],
    ["value with another header value", { region: "eu" }, { "mcp-param-region": "EU" }, false],
    ["null value, no header", { region: null }, {}, true],
    ["absent value, stray header", {}, { "mcp-param-region": "eu" }, true],
    ["integer 42 as 42.0", { n: 42 }, { "mcp-param-n": "42.0" }, true],
    ["integer 42 as 0x2a", { n: 42 }, { "mcp-param-n": "0x2a" }, false],
    ["base64 of the value", { region: "世界" }, { "mcp-param-region": "=?base64?5LiW55WM?=" }, true],
    ["invalid base64", { region: "eu" }, { "mcp-param-region": "=?base64?ZX?=" }, false],
  ])("%s: accepted=%s", (_name, args, headers, accepted) => {
    const refusal = checkParamHeaders(headers, params, args);
    expect(refusal === undefined).toBe(accepted);
    if (refusal) expect([refusal.status, refusal.code]).toEqual([400, -32020]);
  });
});

describe("requestHeaders: what toolpacks sends a 2026 HTTP upstream", () => {
  test("a tools/call mirrors the upstream's own tool name and the annotated arguments", () => {
    const scan = scanParamHeaders({
      type: "object",
      properties: { region: { type: "string", "x-mcp-header": "Region" } },
    });
    const headers = requestHeaders(
      { method: "tools/call", params: { name: "requête", arguments: { region: "us-west1", query: "x" } } },
      scan.ok ? scan.params : [],
    );
    expect(headers).toEqual({
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": "=?base64?cmVxdcOqdGU=?=",
      "mcp-param-region": "us-west1",
    });
  });

  test("tasks/get mirrors the taskId (tasks extension)", () => {
    expect(requestHeaders({ method: "tasks/get", params: { taskId: "t-1" } })["mcp-name"]).toBe("t-1");
  });

  test("resources/read mirrors the URI; list methods have no Mcp-Name", () => {
    expect(requestHeaders({ method: "resources/read", params: { uri: "file:///a b" } })["mcp-name"]).toBe(
      "file:///a b",
    );
    expect(requestHeaders({ method: "tools/list", params: {} })).toEqual({
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/list",
    });
  });
});
