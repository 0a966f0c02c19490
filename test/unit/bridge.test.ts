/** A 2025 upstream call parked for a 2026-07-28 client (bridge B3), with a fake clock and no upstream process. */
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { Bridge, BridgeTable } from "../../src/proxy/bridge.js";

const attached = () => {
  const seen: { method: string; params?: Record<string, unknown> }[] = [];
  return {
    seen,
    call: { notify: (n: { method: string; params?: Record<string, unknown> }) => void seen.push(n) },
  };
};

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** Runs pending timers and microtasks a few times, so that the bridge's setImmediate batching resolves. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await vi.advanceTimersByTimeAsync(1);
}

describe("a bridged call", () => {
  test("requests the upstream asks at the same moment go out in one round", async () => {
    const table = new BridgeTable();
    const b = new Bridge("up", {}, "client", 60_000, (x) => table.delete(x));
    const upstream = new Promise<Record<string, unknown>>(() => {});
    b.hold(upstream);
    const { call } = attached();
    b.attach(call, undefined);
    const step = b.next();
    const signal = new AbortController().signal;
    b.ask({ method: "elicitation/create", params: { message: "a" } }, signal).catch(() => {});
    b.ask({ method: "sampling/createMessage", params: {} }, signal).catch(() => {});
    await settle();
    expect(await step).toEqual({
      ask: {
        r1: { method: "elicitation/create", params: { message: "a" } },
        r2: { method: "sampling/createMessage", params: {} },
      },
    });
  });

  test("an answer goes to the request of its key; a request left unanswered is asked again", async () => {
    const b = new Bridge("up", {}, "client", 60_000, () => {});
    let finish!: (r: Record<string, unknown>) => void;
    b.hold(new Promise((ok) => (finish = ok)));
    b.attach(attached().call, undefined);
    const signal = new AbortController().signal;
    const first = b.ask({ method: "elicitation/create" }, signal);
    b.ask({ method: "roots/list" }, signal).catch(() => {});
    const round1 = b.next();
    await settle();
    expect(Object.keys(((await round1) as { ask: object }).ask)).toEqual(["r1", "r2"]);
    b.park();
    b.answer({ r1: { action: "accept" }, nope: { ignored: true } });
    expect(await first).toEqual({ action: "accept" });
    b.attach(attached().call, undefined);
    const round2 = b.next();
    await settle();
    expect(Object.keys(((await round2) as { ask: object }).ask)).toEqual(["r2"]);
    finish({ content: [] });
  });

  test("the call's result ends the rounds", async () => {
    const b = new Bridge("up", {}, "client", 60_000, () => {});
    b.hold(Promise.resolve({ content: [{ type: "text", text: "done" }] }));
    b.attach(attached().call, undefined);
    expect(await b.next()).toEqual({ done: { content: [{ type: "text", text: "done" }] } });
  });

  test("a parked round that is not retried within the timeout fails what the upstream waits on and cancels it", async () => {
    const table = new BridgeTable();
    const expired: string[] = [];
    const b = new Bridge(
      "up",
      {},
      "client",
      5_000,
      (x) => table.delete(x),
      (x) => void expired.push(x.upstream),
    );
    b.hold(new Promise(() => {}));
    b.attach(attached().call, undefined);
    const waiting = b.ask({ method: "elicitation/create" }, new AbortController().signal);
    const round = b.next();
    await settle();
    await round;
    table.add(b);
    b.park();
    expect(table.size).toBe(1);
    const failed = expect(waiting).rejects.toThrow(/did not retry within input_timeout/);
    await vi.advanceTimersByTimeAsync(5_001);
    await failed;
    expect(b.cancellation.aborted).toBe(true);
    expect(expired).toEqual(["up"]);
    expect(table.size).toBe(0);
  });

  test("progress reaches the attached request under its own token, and nothing reaches a parked one", async () => {
    const b = new Bridge("up", {}, "client", 60_000, () => {});
    const first = attached();
    b.attach(first.call, "tok-1");
    b.progress({ progress: 1 });
    b.park();
    b.progress({ progress: 2 });
    const retry = attached();
    b.attach(retry.call, "tok-2");
    b.progress({ progress: 3 });
    expect(first.seen.map((n) => n.params)).toEqual([{ progress: 1, progressToken: "tok-1" }]);
    expect(retry.seen.map((n) => n.params)).toEqual([{ progress: 3, progressToken: "tok-2" }]);
  });
});

describe("the bridge table", () => {
  test("a holder is released when its last parked bridge leaves", () => {
    const released: object[] = [];
    const table = new BridgeTable(2, (h) => void released.push(h));
    const holder = {};
    const a = new Bridge("up", holder, "client", 1, () => {});
    const b = new Bridge("up", holder, "client", 1, () => {});
    table.add(a);
    table.add(b);
    expect(table.refusal("client")?.message).toMatch(/at most 2, limits\.parked_calls/);
    expect(table.count("client")).toBe(2);
    expect(table.holds(holder)).toBe(true);
    table.delete(a);
    expect(released).toEqual([]);
    table.delete(b);
    expect(released).toEqual([holder]);
    expect(table.holds(holder)).toBe(false);
    expect(table.count("client")).toBe(0);
  });
});
