/**
 * The @modelcontextprotocol/conformance server suite (0.1.13, active scenarios) run against `toolpacks serve`
 * in front of the conformance fixture: whatever the proxy adds or drops on the way shows up as a failed check.
 */
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { ROOT, runToEnd, type Served, serve, tempDir } from "../helpers/proc.js";

/** Scenarios in the active suite of conformance 0.1.13 (`conformance list --server` minus the pending ones). */
const ACTIVE_SCENARIOS = 30;

const tmp = tempDir();
const config = tmp.file(
  "packs.yaml",
  `
name: conformance-gateway
upstreams:
  conf:
    command: node
    args: ["${join(ROOT, "test/fixtures/conformance-server.mjs")}"]
`,
);
let served: Served;

beforeAll(async () => {
  served = await serve([config]);
});
afterAll(async () => {
  await served?.stop();
  tmp.cleanup();
});

async function runSuite(url: string): Promise<{ code: number | null; out: string }> {
  const run = await runToEnd(process.execPath, [join(ROOT, "test/conformance/run-suite.mjs"), "--url", url]);
  return { code: run.code, out: run.stdout + run.stderr };
}

test("a check of the conformance server suite fails through the proxy", { timeout: 180_000 }, async () => {
  const { code, out } = await runSuite(served.url());
  const tally = /^Total: (\d+) passed, (\d+) failed$/m.exec(out);
  console.log(tally ? `conformance (through toolpacks): ${tally[0]}` : out);
  expect(tally, out).not.toBeNull();
  const scenarios = out
    .split("\n")
    .filter((l) => /^[✓✗] \S+: \d+ passed, \d+ failed(, \d+ warnings)?$/.test(l));
  const failing = scenarios.filter((l) => !l.startsWith("✓") || !l.endsWith(", 0 failed"));
  expect(failing, out).toEqual([]);
  expect(scenarios).toHaveLength(ACTIVE_SCENARIOS);
  expect(Number(tally![2])).toBe(0);
  expect(Number(tally![1])).toBeGreaterThanOrEqual(ACTIVE_SCENARIOS);
  expect(code).toBe(0);
});
