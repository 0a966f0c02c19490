/** The memory store: the shared contract, and its total budget under many owners (fake clock, no sleeps). */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { DEFAULT_LIMITS, type StateLimits } from "../../../src/state/config.js";
import { MemoryStateStore } from "../../../src/state/memory.js";
import { describeStateStoreContract, text } from "../../helpers/state-contract.js";

let clock = 1_000_000;
const now = () => clock;

describeStateStoreContract("memory", {
  open: async (limits?: Partial<StateLimits>) =>
    new MemoryStateStore({ limits: { ...DEFAULT_LIMITS, ...limits }, now }),
  elapse: async (ms) => {
    clock += ms;
  },
});

describe("memory store budgets", () => {
  test("many owners each within their budget never take the store over its total", async () => {
    const limits = { ...DEFAULT_LIMITS, maxOwnerBytes: 4096, maxTotalBytes: 20_000 };
    const s = new MemoryStateStore({ limits, now });
    for (let i = 0; i < 40; i++) {
      await s.put(`owner-${i}`, "v", text(3000), 60_000);
      expect((await s.usage("owner-0")).total).toBeLessThanOrEqual(20_000);
    }
    // The newest owner kept its value; as many as fit hold one; the oldest were evicted for them.
    expect(await s.get("owner-39", "v")).toBeDefined();
    expect(await s.get("owner-0", "v")).toBeUndefined();
    let holding = 0;
    for (let i = 0; i < 40; i++) if (await s.get(`owner-${i}`, "v")) holding++;
    expect(holding).toBe(Math.floor(20_000 / (await s.usage("owner-39")).owner));
  });

  test("the counted bytes always equal what the listings hold, and stay within both budgets", async () => {
    const owners = ["o1", "o2", "o3"];
    const op = fc.oneof(
      fc.record({
        kind: fc.constant("put" as const),
        owner: fc.constantFrom(...owners),
        key: fc.constantFrom("a", "b", "c", "d"),
        n: fc.integer({ min: 0, max: 2500 }),
        ttl: fc.integer({ min: 1, max: 5000 }),
      }),
      fc.record({
        kind: fc.constant("delete" as const),
        owner: fc.constantFrom(...owners),
        key: fc.constantFrom("a", "b"),
      }),
      fc.record({ kind: fc.constant("clear" as const), owner: fc.constantFrom(...owners) }),
      fc.record({ kind: fc.constant("elapse" as const), ms: fc.integer({ min: 1, max: 3000 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 60 }), async (ops) => {
        let t = 0;
        const limits = { ...DEFAULT_LIMITS, maxOwnerBytes: 4096, maxTotalBytes: 8192 };
        const s = new MemoryStateStore({ limits, now: () => t });
        for (const o of ops) {
          if (o.kind === "put") await s.put(o.owner, o.key, text(o.n), o.ttl);
          else if (o.kind === "delete") await s.delete(o.owner, o.key);
          else if (o.kind === "clear") await s.clear(o.owner);
          else t += o.ms;
          let total = 0;
          for (const owner of owners) {
            const listed = (await s.list(owner)).reduce((sum, v) => sum + v.size, 0);
            const usage = await s.usage(owner);
            expect(usage.owner).toBe(listed);
            expect(listed).toBeLessThanOrEqual(4096);
            total += listed;
          }
          expect((await s.usage("o1")).total).toBe(total);
          expect(total).toBeLessThanOrEqual(8192);
        }
      }),
      { numRuns: 100 },
    );
  });
});
