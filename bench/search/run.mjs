/** @module The tool-search bench alone: writes bench/results/search.json and prints the figures as Markdown. */
// Usage: npm run build && node bench/search/run.mjs [--json FILE]   (SEARCH_BENCH_ROUNDS=5)
// `npm run bench` runs it as its `search` section, in a process of its own (see bench/run.js).
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { root } from "./lib.mjs";
import { measureSearch, searchMarkdown, searchVerdicts } from "./measure.mjs";

const at = process.argv.indexOf("--json");
if (at > 0 && !process.argv[at + 1]) {
  console.error("usage: node bench/search/run.mjs [--json FILE]");
  process.exit(2);
}
const out = at > 0 ? resolve(process.argv[at + 1]) : join(root, "bench", "results", "search.json");
const result = await measureSearch({
  rounds: Number(process.env.SEARCH_BENCH_ROUNDS ?? 5),
  log: (line) => process.stderr.write(`${line}\n`),
});
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
const verdicts = searchVerdicts(result)
  .map((v) => `| ${v.target} | ${v.measured} | ${v.goal} | ${v.status} |`)
  .join("\n");
console.log(
  `| target | measured | goal | status |\n| --- | --- | --- | --- |\n${verdicts}\n\n${searchMarkdown(result)}`,
);
