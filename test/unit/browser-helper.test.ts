/** The browser tests' helper finds Debian's chromium where `.ci/run` accepts it: the launcher or the binary. */
import { describe, expect, test } from "vitest";
import { chromiumAt } from "../helpers/browser.js";

describe("where the browser tests look for chromium", () => {
  test("chromium installed only at /usr/lib/chromium/chromium is found there", () => {
    expect(chromiumAt((p) => p === "/usr/lib/chromium/chromium")).toBe("/usr/lib/chromium/chromium");
  });

  test("the launcher /usr/bin/chromium comes first when both are there; with neither there is none", () => {
    expect(chromiumAt(() => true)).toBe("/usr/bin/chromium");
    expect(chromiumAt(() => false)).toBeUndefined();
  });
});
