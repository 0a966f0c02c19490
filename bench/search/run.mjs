/** @module The tool-search bench alone: writes bench/results/search.json and prints the figures as Markdown. */
// Usage: npm run build && node bench/search/run.mjs   (SEARCH_BENCH_ROUNDS=5; npm run bench runs it too)
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { root } from "./lib.mjs";
import { measureSearch, searchMarkdown, searchVerdicts } from "./measure.mjs";

const result = await measureSearch({
  rounds: Number(process.env.SEARCH_BENCH_ROUNDS ?? 5),
  log: (line) => process.stderr.write(`${line}\n`),
});
mkdirSync(join(root, "bench", "results"), { recursive: true });
writeFileSync(join(root, "bench", "results", "search.json"), `${JSON.stringify(result, null, 2)}\n`);
const verdicts = searchVerdicts(result)
  .map((v) => `| ${v.target} | ${v.measured} | ${v.goal} | ${v.status} |`)
  .join("\n");
console.log(`| target | measured | goal | status |\n| --- | --- | --- | --- |\n${verdicts}\n\n${searchMarkdown(result)}`);
