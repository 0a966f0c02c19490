/** Why an upstream did not start: the stderr line that says why, not the boilerplate a failing program ends with. */
import { describe, expect, test } from "vitest";
import { silentLogger } from "../../src/log.js";
import { startFailure, tellingLine } from "../../src/upstream/start-failure.js";

/** What real programs wrote to stderr when they failed to start, and the line that says why. */
const TAILS: [string, string[], string][] = [
  [
    "npx without -y and no terminal",
    [
      'npm error npx canceled due to missing packages and no YES option: ["@modelcontextprotocol/server-github@2025.4.8"]',
      "npm error A complete log of this run can be found in: /root/.npm/_logs/2026-12-02T02_18_35_283Z-debug-0.log",
    ],
    'npm error npx canceled due to missing packages and no YES option: ["@modelcontextprotocol/server-github@2025.4.8"]',
  ],
  [
    "npx offline, the package not cached",
    [
      "npm error code ENOTCACHED",
      "npm error request to https://registry.npmjs.org/x failed: cache mode is 'only-if-cached' but no cached response is available.",
      "npm error A complete log of this run can be found in: /root/.npm/_logs/x-debug-0.log",
    ],
    "npm error request to https://registry.npmjs.org/x failed: cache mode is 'only-if-cached' but no cached response is available.",
  ],
  [
    "node with a missing module",
    [
      "node:internal/modules/cjs/loader:1228",
      "  throw err;",
      "  ^",
      "Error: Cannot find module '/srv/missing.js'",
      "    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)",
      "    at node:internal/main/run_main_module:28:49 {",
      "  code: 'MODULE_NOT_FOUND',",
      "  requireStack: []",
      "}",
      "Node.js v20.20.0",
    ],
    "Error: Cannot find module '/srv/missing.js'",
  ],
  [
    "python with a missing module",
    [
      "Traceback (most recent call last):",
      '  File "/srv/server.py", line 1, in <module>',
      "    import mcp",
      "ModuleNotFoundError: No module named 'mcp'",
    ],
    "ModuleNotFoundError: No module named 'mcp'",
  ],
  [
    "a server that says why, then says goodbye",
    ["starting weather server", "fatal: WEATHER_API_KEY is not set", "shutting down"],
    "fatal: WEATHER_API_KEY is not set",
  ],
  ["a single line", ["usage: server --port N"], "usage: server --port N"],
];

describe("start failures", () => {
  test.each(TAILS)(
    "a failed start names the stderr line that says why, not the boilerplate after it: %s",
    (_, tail, why) => {
      expect(tellingLine(tail)).toBe(why);
      const state = startFailure(new Error("connection closed"), tail, silentLogger);
      expect(state).toEqual({ status: "unavailable", reason: `connection closed (stderr: ${why})` });
    },
  );

  test("without stderr the reason is the error alone", () => {
    expect(startFailure(new Error("spawn x ENOENT"), [], silentLogger)).toEqual({
      status: "unavailable",
      reason: "spawn x ENOENT",
    });
  });
});
