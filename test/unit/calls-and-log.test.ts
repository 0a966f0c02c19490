import { describe, expect, it } from "vitest";
import { createLogger, silentLogger } from "../../src/log.js";
import { CallsByUpstream } from "../../src/proxy/calls.js";

describe("a session's calls in flight", () => {
  it("the latest call to an upstream is the last still in flight; ending one twice never ends another", () => {
    const calls = new CallsByUpstream<string>();
    const endA = calls.track("echo", "a");
    const endB = calls.track("echo", "b");
    expect(calls.latest("echo")).toBe("b");
    endA();
    endA();
    expect(calls.latest("echo")).toBe("b");
    endB();
    expect(calls.latest("echo")).toBeUndefined();
    const endC = calls.track("echo", "c");
    expect(calls.latest("echo")).toBe("c");
    endC();
    expect(calls.latest("other")).toBeUndefined();
  });
});

describe("log levels", () => {
  it("a logger says which levels it writes, and writes only those", () => {
    const lines: string[] = [];
    const info = createLogger({ level: "info", format: "json", write: (l) => lines.push(l) });
    expect(info.enabled?.("debug")).toBe(false);
    expect(info.enabled?.("info")).toBe(true);
    expect(info.enabled?.("error")).toBe(true);
    info.debug("not written");
    info.info("written");
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(["written"]);
    const debug = createLogger({ level: "debug", format: "json", write: () => {} });
    expect(debug.enabled?.("debug")).toBe(true);
    expect(silentLogger.enabled?.("error")).toBe(false);
  });
});
