/**
 * find_tools indexes are bounded (SPEC §7.6) through the real CLI: a client that searches under ever new deferred
 * sets, closing each session, cannot make the proxy hold more than the bound of indexes. The proxy runs with its
 * heap capped at 96 MB: keeping an index per cached resolution (as before the bound) ran out of it after 26
 * of these selections.
 */
import { afterAll, describe, expect, test } from "vitest";
import { MAX_SEARCH_INDEXES } from "../../src/proxy/search-indexes.js";
import { FIXTURE, serve, tempDir } from "../helpers/proc.js";
import { closeSession, openSession, request } from "../helpers/wire.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

/** 1,000 tools of about 1 KB in twenty deferred toolsets g0…g19 (50 each). */
const GROUPS = Array.from({ length: 20 }, (_, k) => `g${k}`);
const CONFIG = `
upstreams:
  main:
    command: node
    args: ["${FIXTURE}", "--tools", "", "--many", "1000:1000"]
toolsets:
${GROUPS.map((g) => `  ${g}:\n    deferred: true\n    tools: [main/${g}_*]`).join("\n")}
`;

describe("find_tools indexes", () => {
  test("a client searching under 40 distinct deferred sets, closing each session, leaves at most the bound of indexes and a live proxy", async () => {
    const served = await serve([tmp.file("packs.yaml", CONFIG)], {
      NODE_OPTIONS: "--max-old-space-size=96",
    });
    try {
      const pairs = GROUPS.flatMap((a, i) => GROUPS.slice(i + 1).map((b) => [a, b] as const)).slice(0, 40);
      for (const [a, b] of pairs) {
        const url = served.url(`without=${a},${b}`);
        const { session } = await openSession(url);
        const { answer } = await request(url, session, 1, "tools/call", {
          name: "find_tools",
          arguments: { query: "", toolset: GROUPS.find((g) => g !== a && g !== b), limit: 20 },
        });
        const result = answer.result as { structuredContent: { tools: { toolset: string }[] } };
        const found = result.structuredContent.tools;
        // Only this session's deferred tools: never those of the toolsets it left out.
        expect(found).toHaveLength(20);
        expect(found.some((t) => t.toolset === a || t.toolset === b)).toBe(false);
        expect(await closeSession(url, session)).toBe(200);
      }
      const health = (await (await fetch(`${served.base}/healthz`)).json()) as { sessions: number };
      expect(health.sessions).toBe(0);
      const metrics = await (await fetch(`${served.base}/metrics`)).text();
      // Every index past the bound pushed out the least recently searched one.
      expect(metrics).toMatch(
        new RegExp(
          `^toolpacks_limit_hits_total\\{limit="search_indexes"\\} ${40 - MAX_SEARCH_INDEXES}$`,
          "m",
        ),
      );
      expect(served.proc.exitCode).toBeNull();
      expect(served.stderr()).toMatch(/find_tools index was dropped to make room/);
    } finally {
      await served.stop("SIGKILL");
    }
  });
});
