/** @module Every answer find_tools gives on the bench's tasks, to check that a change of code leaves the ranking as it was. */
// Usage: node bench/search/answers.mjs OUT.json [DIST]   (DIST: a built dist/ folder, default this checkout's)
//   Writes, for every task of every query set (the user's words, then each recorded agent pass) and a few edge
//   cases, the top 20 names and the total: at the real catalog (516 tools), at 5,000 synthesised tools, with
//   a toolset filter, and once more on the warm index. Two builds answer alike when their files are equal:
//   node bench/search/answers.mjs /tmp/new.json && node bench/search/answers.mjs /tmp/old.json ../old/dist
//   && cmp /tmp/new.json /tmp/old.json
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { AGENT_QUERIES } from "./agent-queries.mjs";
import { loadHoldout, loadHoldout2, loadJson, root, servedCatalog } from "./lib.mjs";
import { synthesise } from "./measure.mjs";

const [out, dist = resolve(root, "dist")] = process.argv.slice(2);
if (!out) {
  console.error("usage: node bench/search/answers.mjs OUT.json [DIST]");
  process.exit(2);
}
const { buildIndex } = await import(resolve(dist, "search/index.js"));
const { entries } = await servedCatalog(loadJson("bench/data/catalog.json"));
const tasks = [...loadJson("bench/data/queries.json").queries, ...loadHoldout(), ...loadHoldout2()];
const passes = loadJson(AGENT_QUERIES).passes;
const EDGE = ["", "the", "show me everything", "a".repeat(50), "get get get list", "forget dele", "erase"];
const queries = [
  ...tasks.map((t) => t.query),
  ...passes.flatMap((p) => tasks.map((t) => p.queries[t.id])),
  ...EDGE,
];
const real = buildIndex(entries);
const large = buildIndex(synthesise(entries, 5000, 2));
const toolsets = [...new Set(entries.map((e) => e.toolset))];
const names = (r) => [r.total, r.tools.map((t) => `${t.name}@${t.toolset}`)];
const answers = queries.map((q, i) => [
  q,
  names(real.search(q, { limit: 20 })),
  names(large.search(q, { limit: 20 })),
  names(real.search(q, { limit: 20, toolset: toolsets[i % toolsets.length] })),
  names(real.search(q, { limit: 20 })),
]);
writeFileSync(out, `${JSON.stringify(answers)}\n`);
console.log(
  `${queries.length} queries (${tasks.length} tasks × ${1 + passes.length} query sets, ${EDGE.length} edge cases) answered into ${out}`,
);
