/** @module The search bench's shared parts: the catalog as deferred search entries, the labelled queries, and the scoring. */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const root = resolve(here, "..", "..");

export function loadJson(rel) {
  return JSON.parse(readFileSync(join(root, rel), "utf8"));
}

export const HOLDOUT = "bench/data/queries-holdout.json";

/**
 * The held-out tasks (split `holdout`), written blind to the ranking after the eval split had been read; none if
 * the file is absent. Never tune on them: bench/search/README.md.
 */
export function loadHoldout() {
  return existsSync(join(root, HOLDOUT)) ? loadJson(HOLDOUT).queries : [];
}

/**
 * Whether a holdout task is part of development since round 4: the odd-numbered ones (h001, h003, …), whose
 * misses were read; the even-numbered ones stay blind (bench/search/README.md, "Measured once, then split").
 */
export function developmentHoldout(id) {
  return Number(id.slice(1)) % 2 === 1;
}

export const HOLDOUT2 = "bench/data/queries-holdout2.json";

/**
 * The second held-out set (split `holdout2`), written by a third writer blind to the ranking, after the first
 * holdout had been measured; none if the file is absent. Scored apart from `holdout`, never tuned on.
 */
export function loadHoldout2() {
  return existsSync(join(root, HOLDOUT2)) ? loadJson(HOLDOUT2).queries : [];
}

/** `@modelcontextprotocol/server-github` → `github`, `@sentry/mcp-server` → `sentry`, `firecrawl-mcp` → `firecrawl`. */
export function slugOf(pkg) {
  const [scope, name] = pkg.startsWith("@") ? pkg.slice(1).split("/") : ["", pkg];
  const words = name.split("-").filter((w) => w !== "mcp" && w !== "server");
  return words.length ? words.join("-") : scope;
}

/**
 * The catalog as toolpacks serves it: one stdio upstream and one toolset per server, compiled by the real
 * compiler and resolved by the real resolver against the servers' recorded tool lists. A server whose tool
 * names collide with another's gets `prefix: slug_` (what a user would write), the others keep their names.
 * Returns the whole catalog resolved listed (`?`) and deferred (`?defer=all`), the deferred resolution's
 * search entries (what find_tools indexes), and `key(package, tool) → exposed name`.
 */
export async function servedCatalog(catalog) {
  const [{ compileTexts }, { resolve }, { select }, { searchEntries }] = await Promise.all([
    import("../../dist/catalog/load.js"),
    import("../../dist/resolve.js"),
    import("../../dist/selection.js"),
    import("../../dist/search/deferred.js"),
  ]);
  const owners = new Map();
  for (const s of catalog.servers) for (const t of s.tools) owners.set(t.name, (owners.get(t.name) ?? 0) + 1);
  const upstreams = {};
  const toolsets = {};
  const inventory = new Map();
  const slugs = new Map();
  for (const s of catalog.servers) {
    const slug = slugOf(s.package);
    slugs.set(slug, s.package);
    const collides = s.tools.some((t) => owners.get(t.name) > 1);
    upstreams[slug] = { command: "unused", ...(collides ? { prefix: `${slug.replace(/-/g, "_")}_` } : {}) };
    toolsets[slug] = { title: s.package, description: dollars(s.description ?? ""), tools: [`${slug}/*`] };
    inventory.set(slug, { status: "ready", tools: s.tools, prompts: [], resources: [], templates: [] });
  }
  const compiled = compileTexts([{ file: "catalog.json", text: JSON.stringify({ upstreams, toolsets }) }]);
  if (!compiled.ok) throw new Error(compiled.errors.map((e) => e.message).join("\n"));
  const resolved = (query) => {
    const picked = select(compiled.catalog, query);
    if (!picked.ok) throw new Error(picked.error);
    return resolve(compiled.catalog, picked.selection, inventory);
  };
  const listed = resolved("");
  const deferred = resolved("defer=all");
  const exposed = new Map(listed.tools.map((r) => [key(slugs.get(r.upstream), r.original), r.name]));
  return { listed, deferred, entries: searchEntries(deferred), exposed };
}

/** `$` starts `${VAR}` in a config: a server description's own is written `$$`. */
function dollars(text) {
  return text.replace(/\$/g, "$$$$");
}

export function key(pkg, tool) {
  return `${pkg}\u0000${tool}`;
}

/**
 * recall@1, recall@5 and MRR (reciprocal rank within the first 20, find_tools' largest limit), strict
 * (the expected tool only) and lenient (the expected tool or a listed equivalent).
 */
export function score(index, queries, exposed) {
  const ranks = queries.map((q) => {
    const names = index.search(q.query, { limit: 20 }).tools.map((t) => t.name);
    const want = exposed.get(key(q.expected.package, q.expected.tool));
    const also = new Set([want, ...(q.equivalent ?? []).map((e) => exposed.get(key(e.package, e.tool)))]);
    const strict = names.indexOf(want) + 1;
    const lenient = names.findIndex((n) => also.has(n)) + 1;
    return { id: q.id, query: q.query, want, strict, lenient, top: names.slice(0, 3) };
  });
  const agg = (field) => {
    const rs = ranks.map((r) => r[field]);
    const at = (k) => rs.filter((r) => r > 0 && r <= k).length / rs.length;
    const mrr = rs.reduce((s, r) => s + (r > 0 ? 1 / r : 0), 0) / rs.length;
    return { recall1: round(at(1)), recall5: round(at(5)), mrr: round(mrr) };
  };
  return { n: queries.length, strict: agg("strict"), lenient: agg("lenient"), ranks };
}

export function round(x, digits = 3) {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** A small seeded generator (mulberry32), so synthesised catalogs are the same on every run. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
