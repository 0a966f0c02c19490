/** @module The resolution cache's bounds: by count and by routes held, the newest always kept, nothing across a reload. */
import { describe, expect, test } from "vitest";
import {
  DEFAULT_RESOLUTION_ROUTES,
  DEFAULT_RESOLUTIONS,
  ResolutionCache,
} from "../../src/proxy/resolution-cache.js";
import type { Resolution } from "../../src/resolve.js";

/** A resolution holding `tools` tool routes (only what the cache reads is filled in). */
function resolution(key: string, tools: number): Resolution {
  return {
    key,
    requested: [],
    unavailable: [],
    tools: Array.from({ length: tools }, () => ({})),
    prompts: [],
    resources: [],
  } as unknown as Resolution;
}

async function fill(cache: ResolutionCache, n: number, tools: number): Promise<void> {
  for (let i = 0; i < n; i++) await cache.get(`s${i}`, true, async () => resolution(`s${i}`, tools));
}

describe("cached resolutions", () => {
  test("past 256 selections the least recently used is dropped: the cache never holds more", async () => {
    const cache = new ResolutionCache();
    await fill(cache, DEFAULT_RESOLUTIONS + 40, 3);
    expect(cache.size).toBe(DEFAULT_RESOLUTIONS);
    let computed = 0;
    await cache.get("s0", true, async () => {
      computed++;
      return resolution("s0", 3);
    });
    expect(computed).toBe(1); // s0 was dropped; s295 is still there
    await cache.get("s295", true, async () => {
      computed++;
      return resolution("s295", 3);
    });
    expect(computed).toBe(1);
  });

  test("a large catalog's resolutions are bounded by routes held, not only by count", async () => {
    const cache = new ResolutionCache();
    await fill(cache, 200, 5_000);
    expect(cache.routes).toBeLessThanOrEqual(DEFAULT_RESOLUTION_ROUTES);
    expect(cache.size).toBe(DEFAULT_RESOLUTION_ROUTES / 5_000);
  });

  test("one resolution larger than the budget is kept alone (it is the one in use)", async () => {
    const cache = new ResolutionCache(256, 1_000);
    await fill(cache, 3, 10);
    await cache.get("huge", true, async () => resolution("huge", 5_000));
    expect(cache.size).toBe(1);
    expect(cache.routes).toBe(5_000);
  });

  test("a reload drops everything and its count of routes", async () => {
    const cache = new ResolutionCache();
    await fill(cache, 10, 100);
    cache.clear();
    expect([cache.size, cache.routes]).toEqual([0, 0]);
  });

  test("dropping an upstream's resolutions gives back their routes", async () => {
    const cache = new ResolutionCache();
    await cache.get("a", true, async () => ({ ...resolution("a", 7), requested: ["ta"] }) as Resolution);
    await cache.get("b", true, async () => ({ ...resolution("b", 5), requested: ["tb"] }) as Resolution);
    cache.dropUpstream("up-a", (toolset) => (toolset === "ta" ? ["up-a"] : ["up-b"]));
    expect([cache.size, cache.routes]).toEqual([1, 5]);
  });
});
