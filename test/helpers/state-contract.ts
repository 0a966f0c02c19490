/** The StateStore contract: one suite that every store (memory, Redis) runs and must pass unchanged. */
import { afterEach, describe, expect, test } from "vitest";
import type { StateLimits } from "../../src/state/config.js";
import { StoreUnavailableError } from "../../src/state/errors.js";
import type { StateStore, StoredValue } from "../../src/state/types.js";

export interface ContractHarness {
  /** A fresh, empty store (its own namespace) with these limits over the defaults. */
  open(limits?: Partial<StateLimits>): Promise<StateStore>;
  /** Lets `ms` pass on the store's clock (a fake clock, or real time for Redis). */
  elapse(ms: number): Promise<void>;
}

const TTL = 60_000;
const A = "owner-a";
const B = "owner-b";
const C = "owner-c";

export const text = (n: number, fill = "x"): StoredValue => ({
  text: fill.repeat(n),
  bytes: n,
  meta: { tool: "t" },
});

export function describeStateStoreContract(name: string, harness: ContractHarness): void {
  describe(`StateStore contract: ${name}`, () => {
    const opened: StateStore[] = [];
    const open = async (limits?: Partial<StateLimits>) => {
      const s = await harness.open(limits);
      opened.push(s);
      return s;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
    });

    test("a stored value comes back whole: text, structure, bytes and meta", async () => {
      const s = await open();
      const value = { text: "a\nb ü", structured: { rows: [1, 2], ok: true }, bytes: 7, meta: { tool: "q" } };
      const put = await s.put(A, "files/read/1", value, TTL);
      expect(put).toMatchObject({ stored: true, evicted: [] });
      expect(await s.get(A, "files/read/1")).toEqual(value);
      expect(await s.get(A, "files/read/2")).toBeUndefined();
      expect(await s.get(B, "files/read/1")).toBeUndefined();
    });

    test("a text that is its structure's JSON is stored once, and comes back the same", async () => {
      const s = await open();
      const structured = { items: Array.from({ length: 200 }, (_, i) => ({ id: i, name: `item ${i}` })) };
      const json = JSON.stringify(structured);
      const put = await s.put(A, "k", { text: json, structured, bytes: json.length, meta: {} }, TTL);
      expect(put.size).toBeLessThan(json.length * 1.1);
      expect(await s.get(A, "k")).toEqual({ text: json, structured, bytes: json.length, meta: {} });
      const usage = await s.usage(A);
      expect(usage.owner).toBe(put.size);
    });

    test("a put under the same key replaces the value and counts only the new size", async () => {
      const s = await open();
      await s.put(A, "k", text(3000), TTL);
      const second = await s.put(A, "k", text(100, "y"), TTL);
      expect((await s.get(A, "k"))?.text).toBe("y".repeat(100));
      expect(await s.usage(A)).toEqual({ owner: second.size, total: second.size });
    });

    test("an owner's listing shows its live values oldest first, sizes without contents, nothing of others", async () => {
      const s = await open();
      const p1 = await s.put(A, "one", text(10), TTL);
      await s.put(B, "other", text(10), TTL);
      const p2 = await s.put(A, "two", { ...text(20), meta: { tool: "u" } }, TTL);
      expect(await s.list(A)).toEqual([
        { key: "one", bytes: 10, size: p1.size, meta: { tool: "t" } },
        { key: "two", bytes: 20, size: p2.size, meta: { tool: "u" } },
      ]);
      expect(await s.list(C)).toEqual([]);
    });

    test("an owner over its budget loses its own oldest values first, and is told which", async () => {
      const s = await open({ maxOwnerBytes: 4096, maxTotalBytes: 100_000 });
      await s.put(B, "b", text(2000), TTL);
      await s.put(A, "1", text(1500), TTL);
      await s.put(A, "2", text(1500), TTL);
      const third = await s.put(A, "3", text(1500), TTL);
      expect(third).toMatchObject({ stored: true, evicted: ["1"] });
      expect((await s.list(A)).map((v) => v.key)).toEqual(["2", "3"]);
      expect(await s.get(B, "b")).toBeDefined();
      expect((await s.usage(A)).owner).toBeLessThanOrEqual(4096);
    });

    test("a value larger than the owner's budget is refused and evicts nothing", async () => {
      const s = await open({ maxOwnerBytes: 2048, maxTotalBytes: 100_000 });
      await s.put(A, "small", text(100), TTL);
      const big = await s.put(A, "big", text(5000), TTL);
      expect(big).toMatchObject({ stored: false, reason: "too_large" });
      expect(await s.get(A, "big")).toBeUndefined();
      expect(await s.get(A, "small")).toBeDefined();
    });

    test("past the total budget the owner holding the most gives up its oldest values, so a newcomer can keep some", async () => {
      // Stored sizes: text(1400) 1434 bytes, text(1000) 1034, text(500) 533.
      const s = await open({ maxOwnerBytes: 4096, maxTotalBytes: 5000 });
      const keys = async (o: string) => (await s.list(o)).map((v) => v.key);
      await s.put(A, "a1", text(1400), TTL);
      await s.put(A, "a2", text(1400), TTL);
      await s.put(B, "b1", text(1000), TTL);
      await s.put(B, "b2", text(1000), TTL);
      // B's put is paid by A, which holds the most.
      expect(await s.put(B, "b3", text(500), TTL)).toMatchObject({ stored: true, evicted: [] });
      expect(await keys(A)).toEqual(["a2"]);
      // A newcomer's is paid by B, which holds the most now.
      expect(await s.put(C, "c1", text(1000), TTL)).toMatchObject({ stored: true, evicted: [] });
      expect(await keys(B)).toEqual(["b2", "b3"]);
      await s.put(A, "a3", text(1400), TTL);
      expect(await keys(B)).toEqual(["b3"]);
      // The owner holding the most pays for its own put, and is told which of its values went.
      expect(await s.put(A, "a4", text(1400), TTL)).toMatchObject({ stored: true, evicted: ["a2"] });
      expect(await keys(A)).toEqual(["a3", "a4"]);
      expect((await s.usage(A)).total).toBeLessThanOrEqual(5000);
    });

    test("among owners holding the same, the one whose oldest value is oldest gives one up first", async () => {
      const s = await open({ maxOwnerBytes: 2048, maxTotalBytes: 3200 });
      await s.put(C, "c1", text(1000), TTL);
      await s.put(A, "a1", text(1000), TTL);
      await s.put(B, "b1", text(1000), TTL);
      await s.put(B, "b2", text(100), TTL);
      expect(await s.get(C, "c1")).toBeUndefined();
      expect(await s.get(A, "a1")).toBeDefined();
      expect(await s.get(B, "b1")).toBeDefined();
    });

    test("a value past its TTL is gone from get, list and usage", async () => {
      const s = await open();
      await s.put(A, "short", text(100), 40);
      const long = await s.put(A, "long", text(100), TTL);
      await harness.elapse(150);
      expect(await s.get(A, "short")).toBeUndefined();
      expect((await s.list(A)).map((v) => v.key)).toEqual(["long"]);
      expect(await s.usage(A)).toEqual({ owner: long.size, total: long.size });
    });

    test("delete and clear free what they held", async () => {
      const s = await open();
      await s.put(A, "1", text(100), TTL);
      await s.put(A, "2", text(100), TTL);
      const b = await s.put(B, "1", text(100), TTL);
      expect(await s.delete(A, "1")).toBe(true);
      expect(await s.delete(A, "1")).toBe(false);
      await s.clear(A);
      expect(await s.list(A)).toEqual([]);
      expect(await s.usage(A)).toEqual({ owner: 0, total: b.size });
      expect(await s.get(B, "1")).toBeDefined();
    });

    test("a counter counts from 1 per owner and name, and starts again once its owner is cleared", async () => {
      const s = await open();
      expect([await s.next(A, "files/read", TTL), await s.next(A, "files/read", TTL)]).toEqual([1, 2]);
      expect(await s.next(A, "files/write", TTL)).toBe(1);
      expect(await s.next(B, "files/read", TTL)).toBe(1);
      await s.clear(A);
      expect(await s.next(A, "files/read", TTL)).toBe(1);
      expect(await s.next(B, "files/read", TTL)).toBe(2);
    });

    test("a text kept beside its structure (its JSON, indented JSON, or one of its fields) is stored once", async () => {
      const s = await open();
      const rows = Array.from({ length: 300 }, (_, i) => ({ id: i, name: `row ${i}` }));
      const file = "línea ✓\n".repeat(2000);
      for (const [key, text, structured] of [
        ["indented", JSON.stringify({ rows }, null, 2), { rows }],
        ["field", file, { content: file }],
      ] as const) {
        const put = await s.put(A, key, { text, structured, bytes: text.length, meta: {} }, TTL);
        expect(put.size).toBeLessThan(Buffer.byteLength(JSON.stringify(structured)) + 200);
        expect(await s.get(A, key)).toEqual({ text, structured, bytes: text.length, meta: {} });
      }
    });

    test("an ended session id is ended at once, synchronously; other ids are not", async () => {
      const s = await open();
      expect(s.isEnded("session-1")).toBe(false);
      const ending = s.end("session-1");
      expect(s.isEnded("session-1")).toBe(true);
      await ending;
      expect(s.isEnded("session-2")).toBe(false);
    });

    test("an ended id pushed out by later ends leaves the store saying it forgot ends up to then", async () => {
      const s = await open({ maxEnded: 3 });
      expect(s.forgottenUntil()).toBeUndefined();
      const before = Date.now();
      await s.end("session-pushed-out");
      for (let i = 0; i < 3; i++) await s.end(`session-later-${i}`);
      // Forgotten, but not lost: ids issued up to its end are in doubt (SPEC §8.1), so none of them is rebuilt.
      expect(s.isEnded("session-pushed-out")).toBe(false);
      expect(s.forgottenUntil()).toBeGreaterThanOrEqual(before - 1000);
      expect(s.isEnded("session-later-2")).toBe(true);
    });

    test("records round-trip per namespace, expire after their TTL, and can be deleted", async () => {
      const s = await open();
      await s.kvPut("oauth", "alice@github", "sealed-1", TTL);
      await s.kvPut("bridge", "alice@github", "other", TTL);
      await s.kvPut("oauth", "bob@github", "sealed-2", 40);
      expect(await s.kvGet("oauth", "alice@github")).toBe("sealed-1");
      expect(await s.kvGet("bridge", "alice@github")).toBe("other");
      await harness.elapse(150);
      expect(await s.kvGet("oauth", "bob@github")).toBeUndefined();
      expect(await s.kvDelete("oauth", "alice@github")).toBe(true);
      expect(await s.kvDelete("oauth", "alice@github")).toBe(false);
      expect(await s.kvGet("oauth", "alice@github")).toBeUndefined();
      expect(await s.kvGet("bridge", "alice@github")).toBe("other");
    });

    test("a record over the record size limit is refused", async () => {
      const s = await open({ maxRecordBytes: 1024 });
      await expect(s.kvPut("oauth", "k", "z".repeat(2000), TTL)).rejects.toThrow(RangeError);
      expect(await s.kvGet("oauth", "k")).toBeUndefined();
    });

    test("a malformed owner, namespace or TTL is a TypeError, not a stored value", async () => {
      const s = await open();
      await expect(s.put("a:b", "k", text(1), TTL)).rejects.toThrow(TypeError);
      await expect(s.put(A, "", text(1), TTL)).rejects.toThrow(TypeError);
      await expect(s.put(A, "k", text(1), 0)).rejects.toThrow(TypeError);
      await expect(s.kvPut("o auth", "k", "v", TTL)).rejects.toThrow(TypeError);
    });

    test("a closed store refuses with StoreUnavailableError naming it", async () => {
      const s = await open();
      await s.close();
      const e = await s.get(A, "k").catch((x: unknown) => x);
      expect(e).toBeInstanceOf(StoreUnavailableError);
      expect((e as StoreUnavailableError).store).toBe(s.description);
      expect(s.health()).toBe("down");
    });
  });
}
