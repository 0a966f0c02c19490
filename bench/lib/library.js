/** @module Figures from the toolpacks library itself: resolve() at scale, and tools/list bytes per selection. */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { median, percentile } from "./load.js";

async function lib(root) {
  const need = ["config/load.js", "catalog/compile.js", "selection.js", "resolve.js"];
  const missing = need.filter((f) => !existsSync(join(root, "dist", f)));
  if (missing.length) throw new Error(`not built (dist/${missing[0]} missing)`);
  const [load, compile, selection, resolve] = await Promise.all(
    need.map((f) => import(pathToFileURL(join(root, "dist", f)).href)),
  );
  return { ...load, ...compile, ...selection, ...resolve };
}

/** A config of `toolsets` toolsets over `tools` tools: 20 upstreams, groups of 10; every 10th toolset a glob. */
function synthetic(tools, toolsets) {
  const ups = 20;
  const perUp = tools / ups;
  const perSet = tools / toolsets;
  const upstreams = {};
  const inventory = new Map();
  for (let u = 0; u < ups; u++) {
    upstreams[`up${u}`] = { command: "node", args: [`server-${u}.js`] };
    const defs = [];
    for (let k = 0; k < perUp; k++) {
      const g = Math.floor(k / perSet);
      defs.push({
        name: `u${u}_g${g}_t${k}`,
        description: `Tool ${k} of group ${g} on upstream ${u}: does one thing and reports what it did.`,
        inputSchema: {
          type: "object",
          properties: {
            query: { type: "string", description: "What to look for" },
            limit: { type: "number" },
          },
          required: ["query"],
        },
      });
    }
    inventory.set(`up${u}`, { status: "ready", tools: defs });
  }
  const sets = {};
  const setsPerUp = toolsets / ups;
  for (let t = 0; t < toolsets; t++) {
    const u = Math.floor(t / setsPerUp);
    const g = t % setsPerUp;
    const members =
      t % 10 === 9
        ? [`up${u}/u${u}_g${g}_*`]
        : Array.from({ length: perSet }, (_, i) => `up${u}/u${u}_g${g}_t${g * perSet + i}`);
    sets[`set${t}`] = { title: `Set ${t}`, description: `Toolset ${t}.`, tools: members };
  }
  return { text: JSON.stringify({ name: "bench", upstreams, toolsets: sets }), inventory };
}

/** resolve() for every toolset at once (the worst case a URL can ask for), cold and warm. */
export async function resolveTiming(root, { tools = 2000, toolsets = 200, iterations = 300 } = {}) {
  const L = await lib(root);
  const { text, inventory } = synthetic(tools, toolsets);
  const loaded = L.loadTexts([{ file: "bench-synthetic.yaml", text }], {});
  if (!loaded.ok) throw new Error(`synthetic config rejected: ${JSON.stringify(loaded.errors[0])}`);
  const compiled = L.compile(loaded.files);
  if (!compiled.ok)
    throw new Error(`synthetic config did not compile: ${JSON.stringify(compiled.errors[0])}`);
  const catalog = compiled.catalog;
  const picked = L.select(catalog, "");
  if (!picked.ok) throw new Error(picked.error);
  const t0 = performance.now();
  const first = L.resolve(catalog, picked.selection, inventory);
  const cold = performance.now() - t0;
  const exposed = first.tools.length;
  if (exposed !== tools || first.active.length !== toolsets) {
    throw new Error(`resolve exposed ${exposed} tools in ${first.active.length} toolsets`);
  }
  // Wall time per call (the verdict), and process CPU per call over batches of 10: on a shared machine the
  // wall p99 also counts time this process was not running; the CPU figure also counts GC helper threads.
  const times = [];
  const cpu = [];
  for (let i = 0; i < iterations; i += 10) {
    const c0 = process.cpuUsage();
    for (let j = 0; j < 10; j++) {
      const a = performance.now();
      L.resolve(catalog, picked.selection, inventory);
      times.push(performance.now() - a);
    }
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 10 / 1000);
  }
  times.sort((a, b) => a - b);
  const s0 = performance.now();
  for (let i = 0; i < 100; i++) L.select(catalog, `only=set${i},set${i + 1}&without=set${i + 2}`);
  return {
    tools,
    toolsets,
    coldMs: cold,
    p50Ms: median(times),
    p99Ms: percentile(times, 99),
    cpuMs: median(cpu),
    selectUs: ((performance.now() - s0) / 100) * 1000,
  };
}

/** The example config's toolset names, and the example URLs its comments show. */
export async function exampleSelections(root, file) {
  const L = await lib(root);
  const text = readFileSync(file, "utf8");
  const loaded = L.loadTexts([{ file, text }], process.env);
  if (!loaded.ok) throw new Error(`example config: ${loaded.errors[0]?.message}`);
  const compiled = L.compile(loaded.files);
  if (!compiled.ok) throw new Error(`example config: ${compiled.errors[0]?.message}`);
  const names = compiled.catalog.toolsets.map((t) => t.name);
  const queries = new Map();
  for (const line of text.split("\n")) {
    const m = /^\s*#.*?\/mcp(\?[^\s`'"]*)?(?=\s|$)/.exec(line);
    if (m) queries.set(m[1] ?? "", `example URL /mcp${m[1] ?? ""}`);
  }
  for (const n of names) if (!queries.has(`?only=${n}`)) queries.set(`?only=${n}`, `only ${n}`);
  queries.set(`?only=${names.join(",")}`, "every toolset");
  return [...queries].map(([query, label]) => ({ query, label }));
}
