/** Caching hints on results for 2026-07-28 clients (src/modern/cache.ts). */
import { describe, expect, test } from "vitest";
import { type CacheFacts, cacheHint, decorate, readHint } from "../../src/modern/cache.js";

const base: CacheFacts = {
  method: "tools/list",
  retry: false,
  dependsOnCaller: false,
  upstream: [],
  ttlMs: 60_000,
};

describe("cacheHint", () => {
  test.each([
    ["a list from a shared upstream", {}, { ttlMs: 60_000, cacheScope: "public" }],
    ["a list that depends on who asks", { dependsOnCaller: true }, { ttlMs: 60_000, cacheScope: "private" }],
    [
      "a list with a private upstream part",
      { upstream: [{ ttlMs: 5_000, cacheScope: "public" }, { cacheScope: "private" }] },
      { ttlMs: 5_000, cacheScope: "private" },
    ],
    [
      "a list whose upstream asks for less time",
      { upstream: [{ ttlMs: 1_500, cacheScope: "public" }] },
      { ttlMs: 1_500, cacheScope: "public" },
    ],
    [
      "a 2025 upstream's part (no hints)",
      { upstream: [{ tools: [] }] },
      { ttlMs: 60_000, cacheScope: "public" },
    ],
    ["an upstream with a negative TTL", { upstream: [{ ttlMs: -5 }] }, { ttlMs: 0, cacheScope: "public" }],
    [
      "a retry (inputResponses/requestState)",
      { retry: true, method: "resources/read" },
      { ttlMs: 0, cacheScope: "private" },
    ],
    ["server/discover", { method: "server/discover" }, { ttlMs: 60_000, cacheScope: "public" }],
    ["a fractional TTL", { ttlMs: 10.7 }, { ttlMs: 10, cacheScope: "public" }],
  ])("%s", (_name, facts, hint) => {
    expect(cacheHint({ ...base, ...facts })).toEqual(hint);
  });

  test.each(["tools/call", "prompts/get", "completion/complete", "subscriptions/listen"])(
    "%s carries no hint",
    (method) => {
      expect(cacheHint({ ...base, method })).toBeUndefined();
    },
  );
});

describe("decorate", () => {
  test("a complete cacheable result gets hints, replacing the upstream's", () => {
    const out = decorate(
      { resultType: "complete", tools: [], ttlMs: 999_999, cacheScope: "public" },
      { ...base, dependsOnCaller: true },
    );
    expect(out).toEqual({ resultType: "complete", tools: [], ttlMs: 60_000, cacheScope: "private" });
  });

  test("an input_required result carries no hints", () => {
    const out = decorate(
      { resultType: "input_required", requestState: "s", ttlMs: 5, cacheScope: "public" },
      { ...base, method: "resources/read" },
    );
    expect(out).toEqual({ resultType: "input_required", requestState: "s" });
  });

  test("a tools/call result is left as it is", () => {
    const result = { content: [], ttlMs: 5 };
    expect(decorate(result, { ...base, method: "tools/call" })).toEqual(result);
  });

  test.each([
    [
      { ttlMs: 10, cacheScope: "private" },
      { ttlMs: 10, cacheScope: "private" },
    ],
    [{ ttlMs: "10", cacheScope: "shared" }, {}],
    [{ ttlMs: Number.NaN }, { ttlMs: 0 }],
    ["nope", {}],
  ])("readHint(%j)", (result, hint) => {
    expect(readHint(result)).toEqual(hint);
  });
});
