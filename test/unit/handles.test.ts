/** Captured values on the state store: owners, real-size budgets, and what happens when the store is down. */
import { describe, expect, test } from "vitest";
import { silentLogger } from "../../src/log.js";
import { HandleStore } from "../../src/proxy/handles.js";
import type { Route } from "../../src/resolve.js";
import { DEFAULT_LIMITS, type StateLimits } from "../../src/state/config.js";
import { MemoryStateStore } from "../../src/state/memory.js";
import type { StateStore } from "../../src/state/types.js";

const route = {
  kind: "tool",
  name: "read",
  upstream: "fs",
  original: "read",
  toolsets: ["files"],
  definition: { name: "read" },
  captureOverBytes: 10,
} as Route;
const big = (n: number) => ({ content: [{ type: "text", text: "x".repeat(n) }] });
const A = "s.owner-a";
const B = "s.owner-b";
const DEF = {
  name: "t",
  inputSchema: { type: "object", properties: { s: { type: "string" }, o: { type: "object" } } },
};

/** A memory store whose every call is counted (a store is a dependency passed in: no module mocking). */
function counted(limits: Partial<StateLimits> = {}) {
  const inner = new MemoryStateStore({ limits: { ...DEFAULT_LIMITS, ...limits }, now: () => 1000 });
  const calls: string[] = [];
  const store = new Proxy(inner, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== "function") return v;
      return (...args: unknown[]) => {
        calls.push(String(prop));
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  }) as StateStore;
  const limitsUsed = { ...DEFAULT_LIMITS, ...limits };
  const handles = new HandleStore({ store, maxOwnerBytes: limitsUsed.maxOwnerBytes, logger: silentLogger });
  return { store, handles, calls, inner };
}

const handleOf = (r: Record<string, unknown>) =>
  (r._meta as { "toolpacks/handle"?: { handle: string } } | undefined)?.["toolpacks/handle"]?.handle;

describe("capture", () => {
  test("an error result or a small one passes untouched, and the store is never asked", async () => {
    const { handles, calls } = counted();
    expect(await handles.capture(A, route, { ...big(50), isError: true })).toEqual({
      ...big(50),
      isError: true,
    });
    expect(await handles.capture(A, route, big(5))).toEqual(big(5));
    expect(await handles.substitute(A, DEF, { s: "plain text", o: { a: 1 } })).toEqual({
      s: "plain text",
      o: { a: 1 },
    });
    expect(calls).toEqual([]);
  });

  test("a string parameter gets the stored text, an object parameter the structured value", async () => {
    const { handles } = counted();
    const captured = await handles.capture(A, route, {
      content: [{ type: "text", text: '{"a":[1,2]}'.padEnd(40) }],
      structuredContent: { a: [1, 2], pad: "y".repeat(20) },
    });
    expect(handleOf(captured)).toBe("@state:files/read/1");
    expect(
      await handles.substitute(A, DEF, { s: "@state:files/read/1", o: "@state:files/read/1", x: 1 }),
    ).toEqual({ s: '{"a":[1,2]}'.padEnd(40), o: { a: [1, 2], pad: "y".repeat(20) }, x: 1 });
  });

  test("a handle belongs to its owner: another owner's use of it is -32602 naming it", async () => {
    const { handles } = counted();
    await handles.capture(A, route, big(100));
    const e = (await handles.substitute(B, DEF, { s: "@state:files/read/1" }).catch((x: unknown) => x)) as {
      code: number;
      message: string;
    };
    expect(e.code).toBe(-32602);
    expect(e.message).toMatch(/Unknown or expired handle @state:files\/read\/1 \(argument s\)/);
    // Numbers count per owner: B's first value is /1 too, and A's stays A's.
    expect(handleOf(await handles.capture(B, route, big(200)))).toBe("@state:files/read/1");
    expect(
      ((await handles.substitute(A, DEF, { s: "@state:files/read/1" })) as { s: string }).s,
    ).toHaveLength(100);
  });

  test("a value larger than the owner's budget is returned as sent, and evicts nothing", async () => {
    const { handles } = counted({ maxOwnerBytes: 2048, maxTotalBytes: 100_000 });
    const kept = await handles.capture(A, route, big(1000));
    expect(handleOf(kept)).toBeDefined();
    expect(await handles.capture(A, route, big(5000))).toEqual(big(5000));
    expect(await handles.substitute(A, DEF, { s: handleOf(kept) })).toEqual({ s: "x".repeat(1000) });
  });

  test("a file result with its text repeated in structuredContent is stored once", async () => {
    const { handles, store } = counted();
    const text = "línea ✓ ".repeat(5000);
    await handles.capture(A, route, {
      content: [{ type: "text", text }],
      structuredContent: { content: text },
    });
    const used = await store.usage(A);
    expect(used.owner).toBeLessThan(Buffer.byteLength(text) * 1.01 + 200);
    expect(await handles.substitute(A, DEF, { s: "@state:files/read/1" })).toEqual({ s: text });
  });

  test("the oldest values of an owner go first when it passes its budget, the newest stay", async () => {
    const { handles } = counted({ maxOwnerBytes: 8192, maxTotalBytes: 100_000 });
    for (let i = 0; i < 4; i++) await handles.capture(A, route, big(3000));
    const listed = (await handles.inspect(A, {})).structuredContent as {
      handles: { handle: string; bytes: number }[];
      total_bytes: number;
      max_bytes: number;
    };
    expect(listed.handles.map((h) => h.handle)).toEqual(["@state:files/read/3", "@state:files/read/4"]);
    expect(listed.total_bytes).toBeLessThanOrEqual(8192);
    expect(listed.max_bytes).toBe(8192);
  });
});

describe("inspect_state", () => {
  test("reads a line range or a JSON path of a value, cut to max_bytes", async () => {
    const { handles } = counted();
    const rows = Array.from({ length: 50 }, (_, i) => ({ id: i, name: `row ${i}` }));
    const text = rows.map((r) => JSON.stringify(r)).join("\n");
    await handles.capture(A, route, { content: [{ type: "text", text }], structuredContent: { rows } });
    const lines = (await handles.inspect(A, { handle: "@state:files/read/1", lines: "2-3" }))
      .structuredContent as { value: string };
    expect(lines.value).toBe(`${JSON.stringify(rows[1])}\n${JSON.stringify(rows[2])}`);
    const path = (await handles.inspect(A, { handle: "files/read/1", path: "$.rows[7].name" }))
      .structuredContent as { value: string };
    expect(path.value).toBe("row 7");
    const cut = (await handles.inspect(A, { handle: "@state:files/read/1", max_bytes: 64 }))
      .structuredContent as {
      value: string;
      truncated: boolean;
    };
    expect(Buffer.byteLength(cut.value)).toBeLessThanOrEqual(64);
    expect(cut.truncated).toBe(true);
  });

  test("forget drops every value of an owner and only those", async () => {
    const { handles } = counted();
    await handles.capture(A, route, big(100));
    await handles.capture(B, route, big(100));
    await handles.forget(A);
    expect(((await handles.inspect(A, {})).structuredContent as { handles: unknown[] }).handles).toEqual([]);
    expect(((await handles.inspect(B, {})).structuredContent as { handles: unknown[] }).handles).toHaveLength(
      1,
    );
  });
});

describe("a store that is down", () => {
  test("a result to capture is returned as sent; a handle or inspect_state is -32603 naming the store", async () => {
    const { handles, inner } = counted();
    await handles.capture(A, route, big(100));
    await inner.close();
    expect(await handles.capture(A, route, big(300))).toEqual(big(300));
    for (const p of [
      handles.substitute(A, DEF, { s: "@state:files/read/1" }),
      handles.inspect(A, {}),
      handles.inspect(A, { handle: "@state:files/read/1" }),
    ]) {
      const e = (await p.catch((x: unknown) => x)) as { code: number; message: string; data: unknown };
      expect(e.code).toBe(-32603);
      expect(e.message).toMatch(/the state store memory is unavailable/);
      expect(e.data).toEqual({ store: "memory" });
    }
    // A call without a handle is not the store's business, down or not.
    expect(await handles.substitute(A, DEF, { s: "x" })).toEqual({ s: "x" });
  });
});
