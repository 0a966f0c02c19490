/** @module A control for the agent's-query measure: the blind set searched with every tool name hidden from the index. */
// Usage: npm run build && node bench/search/names-hidden.mjs
// The writers of bench/data/agent-queries.json know these public servers and sometimes recall a tool's name.
// Here each tool's name is replaced by an opaque id before indexing (results are mapped back), so a recalled
// name can match only what descriptions and parameters say. bench/search/README.md quotes the result.
import { buildIndex } from "../../dist/search/index.js";
import { developmentHoldout, loadHoldout, loadHoldout2, loadJson, score, servedCatalog } from "./lib.mjs";
import { AGENT_QUERIES } from "./agent-queries.mjs";

const { entries, exposed } = await servedCatalog(loadJson("bench/data/catalog.json"));
const opaque = new Map();
const named = new Map();
for (const e of entries) {
  if (opaque.has(e.name)) continue;
  opaque.set(e.name, `t${opaque.size}`);
  named.set(opaque.get(e.name), e.name);
}
const hidden = buildIndex(entries.map((e) => ({ ...e, name: opaque.get(e.name) })));
const index = {
  search(query, options) {
    const r = hidden.search(query, options);
    return { ...r, tools: r.tools.map((t) => ({ ...t, name: named.get(t.name) })) };
  },
};
const blind = [...loadHoldout().filter((q) => !developmentHoldout(q.id)), ...loadHoldout2()];
const f = (s) => `${s.recall1.toFixed(3)} / ${s.recall5.toFixed(3)} / ${s.mrr.toFixed(3)}`;
console.log(`blind test set (${blind.length} tasks), tool names hidden; recall@1 / recall@5 / MRR`);
console.log(`  the user's words: ${f(score(index, blind, exposed).lenient)}`);
for (const pass of loadJson(AGENT_QUERIES).passes) {
  const asWritten = blind.map((q) => ({ ...q, query: pass.queries[q.id] }));
  console.log(`  ${pass.name}: ${f(score(index, asWritten, exposed).lenient)}`);
}
