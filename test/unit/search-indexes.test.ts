/**
 * find_tools indexes, pure: keyed by the deferred tools they index (never by resolution), kept in a bounded LRU of
 * their own (SPEC §7.6), shared by concurrent first searches, built a few at a time, counted when dropped.
 */
import { describe, expect, test } from "vitest";
import { EMPTY_OFFER } from "../../src/catalog/inventory.js";
import { silentLogger } from "../../src/log.js";
import { Metrics } from "../../src/metrics.js";
import {
  BUILDS_AT_ONCE,
  type BuildIndex,
  MAX_SEARCH_INDEXES,
  SearchIndexes,
} from "../../src/proxy/search-indexes.js";
import { gatewaySearchIndexes } from "../../src/proxy/state-host.js";
import { resolve } from "../../src/resolve.js";
import { buildIndexAsync } from "../../src/search/build.js";
import { indexKeyOf } from "../../src/search/index-key.js";
import type { SearchEntry, ToolIndex } from "../../src/search/types.js";
import { select } from "../../src/selection.js";
import { catalogOf, inventoryOf, tools } from "../helpers/catalog.js";

/** Ten deferred toolsets g0…g9 of three tools each, and a listed one. */
const GROUPS = Array.from({ length: 10 }, (_, g) => `g${g}`);
const YAML = `
upstreams:
  u: { command: u-server }
  v: { command: v-server }
toolsets:
${GROUPS.map((g) => `  ${g}:\n    deferred: true\n    tools: [u/${g}_*]`).join("\n")}
  listed:
    tools: [v/*]
  other_listed:
    default: false
    tools: [v/ping]
`;
const catalog = catalogOf(YAML);
const inventory = inventoryOf({
  u: GROUPS.flatMap((g) => [`${g}_create`, `${g}_list`, `${g}_delete`]),
  v: ["echo", "ping"],
});

function resolved(query: string, c = catalog, inv = inventory) {
  const r = select(c, query);
  if (!r.ok) throw new Error(r.error);
  return resolve(c, r.selection, inv);
}

/** `without=` two of the ten groups: 45 distinct deferred sets. */
const pairs = GROUPS.flatMap((a, i) => GROUPS.slice(i + 1).map((b) => `without=${a},${b}`));

/** The real build, counting what it was asked to index. */
function counting(): { build: BuildIndex; builds: number[] } {
  const builds: number[] = [];
  return {
    builds,
    build: (entries) => {
      builds.push(entries.length);
      return buildIndexAsync(entries);
    },
  };
}

const names = async (indexes: SearchIndexes, query: string) =>
  (await indexes.of(resolved(query))).search("", { limit: 50 }).tools.map((t) => t.name);

describe("the bound", () => {
  test("however many distinct deferred sets are searched, no more indexes than the bound are kept", async () => {
    const { build, builds } = counting();
    const indexes = new SearchIndexes({ build });
    for (const q of pairs) {
      const index = await indexes.of(resolved(q));
      expect(index.size).toBe(24);
      expect(indexes.size).toBeLessThanOrEqual(MAX_SEARCH_INDEXES);
    }
    expect(pairs.length).toBeGreaterThan(MAX_SEARCH_INDEXES * 5);
    expect(indexes.size).toBe(MAX_SEARCH_INDEXES);
    expect(builds).toHaveLength(pairs.length);
  });

  test("an evicted index is built again at its next search and answers as before", async () => {
    const { build, builds } = counting();
    const indexes = new SearchIndexes({ build, maxIndexes: 2 });
    const first = await names(indexes, pairs[0]!);
    expect(first).not.toContain("g0_list");
    expect(first).toHaveLength(24);
    await names(indexes, pairs[1]!);
    await names(indexes, pairs[2]!);
    expect(builds).toHaveLength(3);
    expect(await names(indexes, pairs[0]!)).toEqual(first);
    expect(builds).toHaveLength(4);
    // The most recently searched stays: searching it again builds nothing.
    await names(indexes, pairs[0]!);
    expect(builds).toHaveLength(4);
  });

  test("the tools indexed stay within the budget; an index larger than the budget alone is still served", async () => {
    const { build, builds } = counting();
    const indexes = new SearchIndexes({ build, maxTools: 50 });
    await names(indexes, pairs[0]!);
    await names(indexes, pairs[1]!);
    expect(indexes.tools).toBe(48);
    await names(indexes, pairs[2]!);
    expect(indexes.size).toBe(2);
    expect(indexes.tools).toBe(48);
    const tiny = new SearchIndexes({ build, maxTools: 10 });
    expect(await names(tiny, pairs[0]!)).toHaveLength(24);
    expect(await names(tiny, pairs[0]!)).toHaveLength(24);
    expect(tiny.size).toBe(1);
    expect(builds).toHaveLength(4);
  });

  test("each index dropped to make room counts as search_indexes in toolpacks_limit_hits_total", async () => {
    const metrics = new Metrics();
    const logged: string[] = [];
    const log = (level: string) => (m: string, f?: Record<string, unknown>) =>
      void logged.push(`${level} ${m} ${f?.limit}`);
    const logger = { ...silentLogger, warn: log("warn"), debug: log("debug") };
    const indexes = gatewaySearchIndexes({ metrics, logger, now: () => 0 });
    for (const q of pairs.slice(0, MAX_SEARCH_INDEXES + 3)) await indexes.of(resolved(q));
    expect(await metrics.text()).toMatch(/^toolpacks_limit_hits_total\{limit="search_indexes"\} 3$/m);
    // Said at warn once a minute, at debug in between.
    expect(logged.map((l) => l.split(" ")[0])).toEqual(["warn", "debug", "debug"]);
    expect(logged[0]).toMatch(/dropped to make room .* search_indexes$/);
  });
});

describe("what shares an index", () => {
  test("selections with different deferred tools never share an index: one's search never returns the other's tools", async () => {
    const indexes = new SearchIndexes();
    const a = await names(indexes, "only=g0,g1");
    const b = await names(indexes, "only=g2");
    expect(a.sort()).toEqual(["g0_create", "g0_delete", "g0_list", "g1_create", "g1_delete", "g1_list"]);
    expect(b.sort()).toEqual(["g2_create", "g2_delete", "g2_list"]);
    expect(indexes.size).toBe(2);
    // A deferred set that contains another is still its own index.
    expect(await names(indexes, "only=g0")).toHaveLength(3);
    expect(indexes.size).toBe(3);
  });

  test("the same tool names with other definitions or in another toolset never share an index", async () => {
    const indexes = new SearchIndexes();
    const before = await indexes.of(resolved("only=g0"));
    // The upstream now describes g0_list differently (a list change, or another config's overrides).
    const changed = new Map(inventory);
    const widgets = { name: "g0_list", description: "Lists every widget.", inputSchema: { type: "object" } };
    changed.set("u", {
      status: "ready",
      ...EMPTY_OFFER,
      tools: [...tools("g0_create", "g0_delete"), widgets],
    });
    const after = await indexes.of(resolved("only=g0", catalog, changed));
    expect(after).not.toBe(before);
    expect(after.search("widget", { limit: 5 }).tools.map((t) => t.name)).toEqual(["g0_list"]);
    expect(before.search("widget", { limit: 5 }).tools).toEqual([]);
    // The same tools under a toolset of another name: the toolset is part of what is indexed and returned.
    const renamed = catalogOf(YAML.replace("  g0:\n", "  h0:\n"));
    const moved = await indexes.of(resolved("only=h0", renamed));
    expect(moved).not.toBe(before);
    expect(moved.search("", { limit: 5 }).tools.map((t) => t.toolset)).toEqual(["h0", "h0", "h0"]);
    expect(indexKeyOf(resolved("only=h0", renamed)).key).not.toBe(indexKeyOf(resolved("only=g0")).key);
  });

  test("selections that differ only in listed toolsets share one index, built once", async () => {
    const { build, builds } = counting();
    const indexes = new SearchIndexes({ build });
    const a = resolved("only=g0,g1,listed");
    const b = resolved("only=g0,g1,other_listed");
    const c = resolved("only=g0,g1");
    expect(a.key).not.toBe(b.key);
    const [ia, ib, ic] = [await indexes.of(a), await indexes.of(b), await indexes.of(c)];
    expect(ib).toBe(ia);
    expect(ic).toBe(ia);
    expect(builds).toEqual([6]);
    expect(indexes.size).toBe(1);
  });

  test("equal resolutions computed apart (another session, after the cache dropped one) share one index", async () => {
    const { build, builds } = counting();
    const indexes = new SearchIndexes({ build });
    const one = resolved("without=g3");
    const two = resolved("without=g3");
    expect(two).not.toBe(one);
    expect(await indexes.of(two)).toBe(await indexes.of(one));
    expect(builds).toHaveLength(1);
  });
});

describe("building", () => {
  /** A build that waits to be let go, counting the builds under way. */
  function gated() {
    const waiting: (() => void)[] = [];
    const state = { running: 0, most: 0, started: 0 };
    const build: BuildIndex = async (entries: readonly SearchEntry[]): Promise<ToolIndex> => {
      state.started++;
      state.running++;
      state.most = Math.max(state.most, state.running);
      await new Promise<void>((go) => waiting.push(go));
      state.running--;
      return buildIndexAsync(entries);
    };
    const release = async () => {
      while (state.started < pairs.length || waiting.length) {
        waiting.shift()?.();
        await new Promise((r) => setImmediate(r));
      }
    };
    return { build, state, waiting, release };
  }

  test("concurrent first searches of the same deferred tools wait for one build", async () => {
    const g = gated();
    const indexes = new SearchIndexes({ build: g.build });
    const searches = [resolved("without=g1"), resolved("without=g1"), resolved("without=g1")].map((r) =>
      indexes.of(r),
    );
    await new Promise((r) => setImmediate(r));
    expect(g.state.started).toBe(1);
    g.waiting.shift()!();
    const [a, b, c] = await Promise.all(searches);
    expect(b).toBe(a);
    expect(c).toBe(a);
  });

  test(`a burst of distinct first searches runs at most ${BUILDS_AT_ONCE} builds at a time, and every one is answered`, async () => {
    const g = gated();
    const indexes = new SearchIndexes({ build: g.build });
    const searches = pairs.map((q) => indexes.of(resolved(q)));
    await new Promise((r) => setImmediate(r));
    expect(g.state.started).toBe(BUILDS_AT_ONCE);
    expect(indexes.size).toBe(MAX_SEARCH_INDEXES);
    await g.release();
    const built = await Promise.all(searches);
    expect(built.every((i) => i.size === 24)).toBe(true);
    expect(g.state.most).toBe(BUILDS_AT_ONCE);
    expect(indexes.size).toBe(MAX_SEARCH_INDEXES);
  });

  test("a failed build is not kept: the next search builds again", async () => {
    let fail = true;
    const indexes = new SearchIndexes({
      build: (entries) => (fail ? Promise.reject(new Error("no")) : buildIndexAsync(entries)),
    });
    await expect(indexes.of(resolved("without=g1"))).rejects.toThrow("no");
    expect(indexes.size).toBe(0);
    expect(indexes.tools).toBe(0);
    fail = false;
    expect((await indexes.of(resolved("without=g1"))).size).toBe(27);
  });
});
