/** @module Grid search of the ranking knobs on the TUNING split only (never the eval split); prints the best settings. */
// Usage: npm run build && node bench/search/tune.mjs [--top N]
import { buildIndex, DEFAULT_RANKING } from "../../dist/search/index.js";
import { loadJson, score, servedCatalog } from "./lib.mjs";

const { entries, exposed } = await servedCatalog(loadJson("bench/data/catalog.json"));
const tuning = loadJson("bench/data/queries.json").queries.filter((q) => q.split === "tuning");
const top = process.argv.includes("--top") ? Number(process.argv[process.argv.indexOf("--top") + 1]) : 10;

// The last pass, around DEFAULT_RANKING. Earlier passes and what each settled are in README.md.
const grid = process.env.TUNE_GRID
  ? JSON.parse(process.env.TUNE_GRID)
  : {
      name: [3],
      summary: [4, 5, 7],
      description: [0.25, 0.5],
      params: [0.2, 0.3],
      toolset: [3, 4, 6],
      b: [0.9, 1],
      k: [2],
      synonymWeight: [0.6, 0.7],
      nameWordPenalty: [0, 0.3, 0.5],
    };

function* combos(keys, at = 0, acc = {}) {
  if (at === keys.length) {
    yield { ...acc };
    return;
  }
  for (const v of grid[keys[at]]) {
    acc[keys[at]] = v;
    yield* combos(keys, at + 1, acc);
  }
}

const results = [];
for (const c of combos(Object.keys(grid))) {
  const ranking = {
    ...DEFAULT_RANKING,
    boost: {
      name: c.name,
      title: 1,
      summary: c.summary,
      description: c.description,
      params: c.params,
      toolset: c.toolset,
    },
    bm25: { ...DEFAULT_RANKING.bm25, k: c.k, b: c.b },
    synonymWeight: c.synonymWeight,
    nameWordPenalty: c.nameWordPenalty,
  };
  const s = score(buildIndex(entries, ranking), tuning, exposed);
  results.push({ c, ...s.lenient, strictR1: s.strict.recall1 });
}
// recall@5 first (the target that matters most for a model that reads 5 hits), then MRR, then recall@1.
results.sort((a, b) => b.recall5 - a.recall5 || b.mrr - a.mrr || b.recall1 - a.recall1);
const base = score(buildIndex(entries), tuning, exposed).lenient;
console.log(`tuning split: ${tuning.length} tasks; ${results.length} settings tried`);
console.log(`current DEFAULT_RANKING: ${JSON.stringify(base)}`);
for (const r of results.slice(0, top)) console.log(JSON.stringify(r));
