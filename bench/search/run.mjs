/** @module Tool-search bench: ranking quality on the labelled queries, tools/list bytes listed vs deferred, latency and build time. */
// Usage: npm run build && node bench/search/run.mjs   (writes bench/results/search.json, prints markdown)
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { toolsetsToolDef } from "../../dist/proxy/toolsets-tool.js";
import { buildIndex, DEFAULT_RANKING, deferredToolDefs } from "../../dist/search/index.js";
import { catalogEntries, loadJson, rng, root, round, score } from "./lib.mjs";

const ROUNDS = Number(process.env.SEARCH_BENCH_ROUNDS ?? 5);
const SIZES = [300, 5000];

const catalog = loadJson("bench/data/catalog.json");
const { queries } = loadJson("bench/data/queries.json");
const { entries, exposed, definitions } = catalogEntries(catalog);

// 1. Ranking quality: every tool of the catalog deferred into one index.
const index = buildIndex(entries);
const split = (name) => queries.filter((q) => q.split === name);
const quality = {
  eval: score(index, split("eval"), exposed),
  tuning: score(index, split("tuning"), exposed),
  all: score(index, queries, exposed),
};

// 2. What tools/list costs: the whole catalog listed, or only the deferred entry points.
const listedBytes = Buffer.byteLength(JSON.stringify({ tools: definitions }));
const deferredBytes = Buffer.byteLength(JSON.stringify({ tools: [...deferredToolDefs, toolsetsToolDef] }));

// 3. Speed at 300 real tools (a seeded sample), all real tools, and 5,000 synthesised from them.
function sample(n, seed) {
  const r = rng(seed);
  const copy = [...entries];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy.slice(0, n);
}

function shuffleWords(text, r) {
  const words = text.split(/\s+/);
  for (let i = words.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [words[i], words[j]] = [words[j], words[i]];
  }
  return words.join(" ");
}

/** The real tools, then copies with suffixed names, shuffled descriptions and their own toolsets. */
function synthesise(n, seed) {
  const r = rng(seed);
  const out = [...entries];
  for (let k = 1; out.length < n; k++) {
    for (const e of entries) {
      if (out.length >= n) break;
      out.push({
        ...e,
        name: `${e.name}_v${k}`,
        ...(e.description === undefined ? {} : { description: shuffleWords(e.description, r) }),
        toolset: `${e.toolset}-${k}`,
      });
    }
  }
  return out;
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function speed(set) {
  const builds = [];
  let built;
  for (let i = 0; i < 3; i++) {
    const t0 = process.hrtime.bigint();
    built = buildIndex(set);
    builds.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  for (const q of queries) built.search(q.query, { limit: 5 }); // warm-up
  const times = [];
  // On a shared machine a search is often preempted: each query's best round is what the code costs.
  const best = queries.map(() => Number.POSITIVE_INFINITY);
  const cpu0 = process.cpuUsage();
  for (let round = 0; round < ROUNDS; round++) {
    queries.forEach((q, i) => {
      const t0 = process.hrtime.bigint();
      built.search(q.query, { limit: 5 });
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      times.push(ms);
      best[i] = Math.min(best[i], ms);
    });
  }
  const cpu = process.cpuUsage(cpu0);
  times.sort((a, b) => a - b);
  best.sort((a, b) => a - b);
  builds.sort((a, b) => a - b);
  return {
    tools: set.length,
    searches: times.length,
    p50Ms: round(percentile(times, 50), 3),
    p99Ms: round(percentile(times, 99), 3),
    bestOfRoundsP50Ms: round(percentile(best, 50), 3),
    bestOfRoundsP99Ms: round(percentile(best, 99), 3),
    cpuMeanMs: round((cpu.user + cpu.system) / 1000 / times.length, 3),
    buildMs: round(builds[1], 1),
  };
}

const speeds = [speed(sample(SIZES[0], 1)), speed(entries), speed(synthesise(SIZES[1], 2))];

const result = {
  date: new Date().toISOString(),
  node: process.version,
  cpu: cpus()[0]?.model ?? "unknown",
  // Latency is wall time on a shared machine: the load says how much to trust it.
  loadAverage: loadavg().map((x) => round(x, 1)),
  catalog: {
    servers: catalog.servers.map((s) => `${s.package}@${s.version} (${s.tools.length})`),
    tools: entries.length,
  },
  queries: { all: queries.length, eval: split("eval").length, tuning: split("tuning").length },
  ranking: DEFAULT_RANKING,
  quality: Object.fromEntries(
    Object.entries(quality).map(([k, v]) => [k, { n: v.n, strict: v.strict, lenient: v.lenient }]),
  ),
  misses: quality.eval.ranks
    .filter((r) => r.lenient !== 1)
    .map(({ id, query, want, lenient, top }) => ({
      id,
      query,
      want,
      rank: lenient || null,
      top,
    })),
  toolsList: {
    listedBytes,
    listedTokens: Math.round(listedBytes / 4),
    deferredBytes,
    deferredTokens: Math.round(deferredBytes / 4),
  },
  speed: speeds,
};

mkdirSync(join(root, "bench", "results"), { recursive: true });
writeFileSync(join(root, "bench", "results", "search.json"), `${JSON.stringify(result, null, 2)}\n`);

const q = (v) => `${v.recall1.toFixed(3)} | ${v.recall5.toFixed(3)} | ${v.mrr.toFixed(3)}`;
const lines = [
  `## Tool search (${entries.length} real tools from ${catalog.servers.length} servers, ${queries.length} tasks)`,
  "",
  "| split | tasks | recall@1 | recall@5 | MRR | strict recall@1 | strict recall@5 | strict MRR |",
  "| --- | --- | --- | --- | --- | --- | --- | --- |",
  ...Object.entries(quality).map(([k, v]) => `| ${k} | ${v.n} | ${q(v.lenient)} | ${q(v.strict)} |`),
  "",
  "| tools/list | bytes | ≈ tokens |",
  "| --- | --- | --- |",
  `| whole catalog listed | ${listedBytes} | ${Math.round(listedBytes / 4)} |`,
  `| deferred (find_tools + call_tool + list_server_toolsets) | ${deferredBytes} | ${Math.round(deferredBytes / 4)} |`,
  "",
  "| tools indexed | search p50 (ms) | search p99 (ms) | best-of-rounds p50 / p99 (ms) | CPU per search (ms) | index build (ms) |",
  "| --- | --- | --- | --- | --- | --- |",
  ...speeds.map(
    (s) =>
      `| ${s.tools} | ${s.p50Ms} | ${s.p99Ms} | ${s.bestOfRoundsP50Ms} / ${s.bestOfRoundsP99Ms} | ${s.cpuMeanMs} | ${s.buildMs} |`,
  ),
  "",
  `Misses at rank 1 on eval: ${result.misses.length} (see bench/results/search.json). ` +
    `Load average while measuring: ${result.loadAverage.join(", ")} on ${cpus().length} cores.`,
];
console.log(lines.join("\n"));
