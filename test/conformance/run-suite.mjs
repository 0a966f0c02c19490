#!/usr/bin/env node
// Runs the @modelcontextprotocol/conformance 0.1.13 server suite.
//   node test/conformance/run-suite.mjs                     start serve-fixture-http.mjs, run the active suite on it
//   node test/conformance/run-suite.mjs --url URL            run against URL (e.g. the proxy), nothing started
//   ... [--suite active|all|pending] [--scenario NAME] [-o DIR] [--expected-failures FILE]
// Every other argument is passed to `conformance server` as is. Exit code: the CLI's (1 when a check failed).
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const cli = path.join(
  path.dirname(require.resolve("@modelcontextprotocol/conformance/package.json")),
  "dist/index.js",
);

const args = process.argv.slice(2);
let fixture;

async function startFixture() {
  fixture = spawn(process.execPath, [path.join(here, "serve-fixture-http.mjs"), "0"], {
    stdio: ["ignore", "inherit", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let buffered = "";
    const onData = (chunk) => {
      buffered += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(buffered);
      if (match) {
        fixture.stderr.off("data", onData);
        fixture.stderr.pipe(process.stderr);
        resolve(match[1]);
      }
    };
    fixture.stderr.setEncoding("utf8");
    fixture.stderr.on("data", onData);
    fixture.once("exit", (code) => reject(new Error(`fixture exited early (code ${code}): ${buffered}`)));
  });
}

const urlIndex = args.indexOf("--url");
if (urlIndex === -1) {
  args.push("--url", await startFixture());
}

const started = Date.now();
const child = spawn(process.execPath, [cli, "server", ...args], { stdio: "inherit" });
child.on("exit", (code, signal) => {
  process.stderr.write(`conformance exited with ${code ?? signal} after ${Date.now() - started} ms\n`);
  fixture?.kill("SIGTERM");
  process.exit(code ?? 1);
});
