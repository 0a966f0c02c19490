/**
 * The @modelcontextprotocol/conformance server suite (0.1.13, active scenarios) run against `toolpacks serve`
 * in front of the conformance fixture: whatever the proxy adds or drops on the way shows up as a failed check.
 */
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { ROOT, runScript, type Served, serve, startListening, tempDir } from "../helpers/proc.js";

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
    # The fixture asks its client for sampling, elicitation and roots, and logs during calls: over stdio
    # nothing ties those to a call, so each session gets its own process.
    isolation: per-session
    max_instances: 64
`,
);
let served: Served;
let fixture: ReturnType<typeof startListening>;
let sharedHttp: Served;

beforeAll(async () => {
  served = await serve([config]);
  // The same fixture over Streamable HTTP, shared by every session: what it sends during a call arrives on
  // that call's own response stream, so it is tied to its client and passes through.
  fixture = startListening([join(ROOT, "test/conformance/serve-fixture-http.mjs"), "0"]);
  const port = await fixture.listening;
  const httpConfig = tmp.file(
    "http.yaml",
    `
name: conformance-gateway
upstreams:
  conf:
    url: http://127.0.0.1:${port}/mcp
`,
  );
  sharedHttp = await serve([httpConfig]);
});
afterAll(async () => {
  await served?.stop();
  await sharedHttp?.stop();
  fixture?.proc.kill("SIGKILL");
  tmp.cleanup();
});

async function runSuite(url: string): Promise<{ code: number | null; out: string }> {
  const run = await runScript(join(ROOT, "test/conformance/run-suite.mjs"), ["--url", url]);
  return { code: run.code, out: run.stdout + run.stderr };
}

async function expectAllPass(url: string, what: string): Promise<void> {
  const { code, out } = await runSuite(url);
  const tally = /^Total: (\d+) passed, (\d+) failed$/m.exec(out);
  console.log(tally ? `conformance (through toolpacks, ${what}): ${tally[0]}` : out);
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
}

test("every check of the conformance server suite passes through the proxy, per-session stdio upstream", {
  timeout: 180_000,
}, async () => {
  await expectAllPass(served.url(), "per-session stdio upstream");
});

test("every check of the conformance server suite passes through the proxy, shared HTTP upstream", {
  timeout: 180_000,
}, async () => {
  await expectAllPass(sharedHttp.url(), "shared HTTP upstream");
});
