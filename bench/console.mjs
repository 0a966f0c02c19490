#!/usr/bin/env node
/**
 * @module The browser console's first load, in Debian's chromium (playwright-core): what it transfers (compressed,
 * as the browser received it: the page, its files and its first data) and how long until it is usable (the page's
 * own `console-ready` mark: the cards, the costs and the URL drawn), for the bundled example, fresh tab and empty
 * cache each run. `node bench/console.mjs [--runs N] [--json FILE]`; `npm run bench` runs it as its `console` section.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { spawn } from "node:child_process";

const CHROMIUM = "/usr/bin/chromium";
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync"];

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Serves the example, loads the console `runs` times in fresh contexts; bytes per load and ms to usable. */
export async function consoleFirstLoad(root, runs = 7) {
  if (!existsSync(CHROMIUM)) return { skipped: "chromium is not installed (apt-get install -y chromium)" };
  const { chromium } = await import("playwright-core");
  const proc = spawn(process.execPath, [join(root, "dist/cli.js"), "serve", join(root, "packs.example.yaml"), "--port", "0", "--log-format", "text"], { cwd: root, stdio: ["ignore", "ignore", "pipe"] });
  const base = await new Promise((ok, fail) => {
    let err = "";
    const timer = setTimeout(() => fail(new Error(`no listening line: ${err}`)), 30_000);
    proc.stderr.on("data", (d) => {
      err += d;
      const m = /console on (http:\/\/[^\s/]+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        ok(m[1]);
      }
    });
    proc.once("exit", (code) => fail(new Error(`serve exited with ${code}: ${err}`)));
  });
  const profile = mkdtempSync(join(tmpdir(), "toolpacks-console-bench-"));
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
  try {
    const loads = [];
    for (let i = 0; i <= runs; i++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      const sizes = [];
      page.on("requestfinished", (r) => sizes.push(r.sizes().then((s) => s.responseBodySize + s.responseHeadersSize)));
      await page.goto(`${base}/ui`);
      await page.waitForSelector("body[data-ready=true]");
      const ready = await page.evaluate(`performance.getEntriesByName("console-ready")[0].startTime`);
      await page.waitForLoadState("networkidle");
      const bytes = (await Promise.all(sizes)).reduce((a, b) => a + b, 0);
      // The first run starts the server's side warm (its files compressed once, its resolution cached): not kept.
      if (i > 0) loads.push({ ready, bytes, responses: sizes.length });
      await context.close();
    }
    return {
      runs,
      readyMs: { median: median(loads.map((l) => l.ready)), max: Math.max(...loads.map((l) => l.ready)) },
      bytes: median(loads.map((l) => l.bytes)),
      responses: loads[0].responses,
      budget: { bytes: 150 * 1024, readyMs: 1000 },
    };
  } finally {
    await browser.close();
    proc.kill("SIGTERM");
    await new Promise((ok) => proc.once("exit", ok));
    rmSync(profile, { recursive: true, force: true });
  }
}

export function consoleMarkdown(r) {
  if (!r || r.skipped) return r?.skipped ? `Browser console: skipped (${r.skipped}).` : "";
  return [
    "## Browser console, first load (bundled example, chromium)",
    "",
    "| | measured | budget |",
    "| --- | --- | --- |",
    `| transferred (compressed, ${r.responses} responses) | ${(r.bytes / 1024).toFixed(1)} KB | ${r.budget.bytes / 1024} KB |`,
    `| navigation to usable (median of ${r.runs}; max) | ${r.readyMs.median.toFixed(0)} ms (${r.readyMs.max.toFixed(0)} ms) | ${r.budget.readyMs} ms |`,
  ].join("\n");
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { runs: { type: "string", default: "7" }, json: { type: "string" } } });
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
  const r = await consoleFirstLoad(root, Number(values.runs));
  if (values.json) writeFileSync(values.json, `${JSON.stringify(r, null, 2)}\n`);
  process.stdout.write(`${consoleMarkdown(r)}\n`);
}
