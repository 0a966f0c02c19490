import { describe, expect, it } from "vitest";
import { Cancellation } from "../../src/wire/signal.js";

describe("a request's cancellation", () => {
  it("runs each listener once, in order, with the reason it was aborted with; a later abort changes nothing", () => {
    const c = new Cancellation();
    const seen: string[] = [];
    c.addEventListener("abort", () => seen.push(`a:${String(c.reason)}`));
    c.addEventListener("abort", () => seen.push("b"), { once: true });
    expect(c.aborted).toBe(false);
    c.abort("gone");
    c.abort("again");
    expect(seen).toEqual(["a:gone", "b"]);
    expect(c.aborted).toBe(true);
    expect(() => c.throwIfAborted()).toThrow("gone");
  });

  it("a listener removed before the abort, or added after it, never runs (as with a Web AbortSignal)", () => {
    const c = new Cancellation();
    let runs = 0;
    const listener = () => runs++;
    c.addEventListener("abort", listener);
    c.removeEventListener("abort", listener);
    c.abort();
    c.addEventListener("abort", listener);
    expect(runs).toBe(0);
    expect((c.reason as Error).name).toBe("AbortError");
  });
});
