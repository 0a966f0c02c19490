/** File-descriptor headroom (SPEC §7.6): the soft limit read once, open descriptors sampled cheaply. */
import { existsSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { FdHeadroom, headroomOf, procFdGauge, softFdLimit } from "../../src/door/fd-headroom.js";

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            4096                 524288               files
Max locked memory         8388608              8388608              bytes
`;

describe("file-descriptor headroom", () => {
  test("the soft limit is read from /proc/self/limits; unlimited or unreadable means no check", () => {
    expect(softFdLimit(() => LIMITS)).toBe(4096);
    expect(softFdLimit(() => LIMITS.replace("4096  ", "unlimited"))).toBeUndefined();
    expect(
      softFdLimit(() => {
        throw new Error("ENOENT");
      }),
    ).toBeUndefined();
  });

  test("the headroom is 5 % of the limit, at least 64, at most half of a small limit", () => {
    expect(headroomOf(4096)).toBe(205);
    expect(headroomOf(1024)).toBe(64);
    expect(headroomOf(100)).toBe(50);
  });

  test("low once free descriptors are under the headroom; counted at most once per interval", () => {
    let open = 3000;
    let counted = 0;
    let now = 0;
    const h = new FdHeadroom(
      {
        limit: 4096,
        everyMs: 100,
        open: () => {
          counted++;
          return open;
        },
      },
      () => now,
    );
    expect(h.low()).toBeUndefined();
    open = 3950;
    expect(h.low()).toBeUndefined(); // the sample of a moment ago
    now = 100;
    expect(h.low()).toEqual({ open: 3950, limit: 4096 });
    for (let i = 0; i < 50; i++) h.low();
    expect(counted).toBe(2);
  });

  test("without a known limit nothing is counted and nothing is refused", () => {
    let counted = 0;
    const h = new FdHeadroom({ limit: undefined, open: () => ++counted }, () => 0);
    expect(h.low()).toBeUndefined();
    expect(counted).toBe(0);
  });

  test.skipIf(!existsSync("/proc/self/fd"))(
    "on Linux this process's gauge reads a limit and a count under it",
    () => {
      const g = procFdGauge();
      expect(g.limit).toBeGreaterThan(0);
      const open = g.open();
      expect(open).toBeGreaterThan(2);
      expect(open).toBeLessThan(g.limit!);
    },
  );

  test("a count that fails for want of a descriptor is the limit reached, not 'no check'", () => {
    const failing = (code: string) => () => {
      throw Object.assign(new Error(code), { code });
    };
    expect(procFdGauge(1000, failing("EMFILE")).open()).toBe(1000);
    expect(procFdGauge(1000, failing("ENFILE")).open()).toBe(1000);
    expect(procFdGauge(1000, failing("ENOENT")).open()).toBeUndefined();
    const h = new FdHeadroom(procFdGauge(1000, failing("EMFILE")), () => 0);
    expect(h.low()).toBeDefined();
  });
});
