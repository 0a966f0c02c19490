/** The per-request `_meta` envelope of 2026-07-28 (src/modern/meta.ts). */
import { describe, expect, test } from "vitest";
import {
  checkEnvelope,
  envelopeMeta,
  hasClaim,
  isModernVersion,
  legacyResult,
  readEnvelope,
  resultTypeOf,
  stampResult,
  withoutEnvelope,
} from "../../src/modern/meta.js";

const V = "io.modelcontextprotocol/protocolVersion";
const C = "io.modelcontextprotocol/clientCapabilities";
const I = "io.modelcontextprotocol/clientInfo";
const L = "io.modelcontextprotocol/logLevel";
const S = "io.modelcontextprotocol/serverInfo";
const good = { [V]: "2026-07-28", [C]: { elicitation: {} } };

describe("readEnvelope", () => {
  test.each([
    ["no params", undefined, -32602, { missing: ["_meta"] }],
    ["params without _meta", { name: "x" }, -32602, { missing: ["_meta"] }],
    ["_meta not an object", { _meta: [] }, -32602, { missing: ["_meta"] }],
    ["no protocolVersion", { _meta: { [C]: {} } }, -32602, { missing: [V] }],
    ["no clientCapabilities", { _meta: { [V]: "2026-07-28" } }, -32602, { missing: [C] }],
    ["neither", { _meta: { progressToken: 1 } }, -32602, { missing: [V, C] }],
    ["protocolVersion not a string", { _meta: { [V]: 20260728, [C]: {} } }, -32602, undefined],
    ["clientCapabilities not an object", { _meta: { [V]: "2026-07-28", [C]: "all" } }, -32602, undefined],
    ["clientInfo without version", { _meta: { ...good, [I]: { name: "x" } } }, -32602, undefined],
    ["an unknown log level", { _meta: { ...good, [L]: "loud" } }, -32602, undefined],
    [
      "an unknown version",
      { _meta: { ...good, [V]: "1900-01-01" } },
      -32022,
      { supported: ["2026-07-28"], requested: "1900-01-01" },
    ],
    [
      "a future version",
      { _meta: { ...good, [V]: "2027-01-01" } },
      -32022,
      { supported: ["2026-07-28"], requested: "2027-01-01" },
    ],
  ])("a request with %s is refused with HTTP 400 and the right code", (_name, params, code, data) => {
    const read = readEnvelope(params);
    expect(read.ok).toBe(false);
    if (read.ok) return;
    expect(read.refusal.status).toBe(400);
    expect(read.refusal.code).toBe(code);
    if (data) expect(read.refusal.data).toEqual(data);
  });

  test("an unsupported version's -32022 lists what the server advertises, 2025 versions included", () => {
    const read = readEnvelope(
      { _meta: { ...good, [V]: "2027-01-01" } },
      ["2026-07-28"],
      ["2026-07-28", "2025-11-25"],
    );
    expect(!read.ok && read.refusal.data).toEqual({
      supported: ["2026-07-28", "2025-11-25"],
      requested: "2027-01-01",
    });
  });

  test("clientInfo is optional; the envelope carries what the request said and nothing it did not", () => {
    const read = readEnvelope({ _meta: { ...good, progressToken: 7 } });
    expect(read).toEqual({
      ok: true,
      envelope: { protocolVersion: "2026-07-28", clientCapabilities: { elicitation: {} } },
    });
    const full = readEnvelope({ _meta: { ...good, [I]: { name: "c", version: "1" }, [L]: "warning" } });
    expect(full.ok && full.envelope).toEqual({
      protocolVersion: "2026-07-28",
      clientCapabilities: { elicitation: {} },
      clientInfo: { name: "c", version: "1" },
      logLevel: "warning",
    });
  });

  test("checkEnvelope checks the shape only: any version string passes it", () => {
    expect(checkEnvelope({ _meta: { ...good, [V]: "1900-01-01" } }).ok).toBe(true);
  });
});

describe("claims and versions", () => {
  test.each([
    [{ _meta: good }, true],
    [{ _meta: { [V]: 1 } }, true],
    [{ _meta: { [C]: {} } }, false],
    [{ _meta: {} }, false],
    [{}, false],
    [undefined, false],
  ])("hasClaim(%j) is %s", (params, claim) => {
    expect(hasClaim(params)).toBe(claim);
  });

  test.each([
    ["2026-07-28", true],
    ["2027-01-01", true],
    ["2025-11-25", false],
    ["2024-11-05", false],
    ["latest", false],
    ["2026-7-28", false],
  ])("isModernVersion(%s) is %s", (v, modern) => {
    expect(isModernVersion(v)).toBe(modern);
  });
});

describe("forwarding _meta", () => {
  test("a 2025 upstream gets the client's _meta without the envelope keys", () => {
    const meta = {
      ...good,
      [I]: { name: "c", version: "1" },
      [L]: "info",
      progressToken: "p",
      traceparent: "00-x",
    };
    expect(withoutEnvelope(meta)).toEqual({ progressToken: "p", traceparent: "00-x" });
  });

  test("a 2026 upstream gets the envelope the proxy chose, beside the request's other keys", () => {
    const meta = envelopeMeta(
      {
        protocolVersion: "2026-07-28",
        clientCapabilities: {},
        clientInfo: { name: "toolpacks", version: "0.1.0" },
      },
      { progressToken: 3, [C]: { sampling: {} } },
    );
    expect(meta).toEqual({
      progressToken: 3,
      [V]: "2026-07-28",
      [C]: {},
      [I]: { name: "toolpacks", version: "0.1.0" },
    });
  });
});

describe("results", () => {
  const me = { name: "toolpacks", version: "0.1.0" };

  test("a 2025 upstream's result reaches a 2026 client with resultType complete and the proxy's serverInfo", () => {
    const out = stampResult(
      { content: [], _meta: { [S]: { name: "upstream", version: "9" }, "x.y/z": 1 } },
      me,
    );
    expect(out).toEqual({ content: [], resultType: "complete", _meta: { [S]: me, "x.y/z": 1 } });
  });

  test("an input_required result keeps its resultType", () => {
    expect(stampResult({ resultType: "input_required", requestState: "s" }, me).resultType).toBe(
      "input_required",
    );
  });

  test.each([
    [{}, "complete"],
    [{ resultType: "input_required" }, "input_required"],
    [{ resultType: 5 }, "complete"],
    [null, "complete"],
  ])("resultTypeOf(%j) is %s", (result, type) => {
    expect(resultTypeOf(result)).toBe(type);
  });

  test("a 2025 client never sees resultType, cache hints or the serverInfo stamp", () => {
    expect(
      legacyResult({ tools: [], resultType: "complete", ttlMs: 5, cacheScope: "public", _meta: { [S]: me } }),
    ).toEqual({
      tools: [],
    });
    expect(legacyResult({ content: [], _meta: { [S]: me, keep: 1 } })).toEqual({
      content: [],
      _meta: { keep: 1 },
    });
  });
});
