/** @module Checks a labelled query file without searching: every label names a catalogued tool, ids are unique, no task repeats one in any other query file; prints tasks per server. */
// Usage: node bench/search/check-queries.mjs [bench/data/queries-holdout.json | queries-holdout2.json]   (exit 1 on any problem)
import { readdirSync } from "node:fs";
import { basename, join } from "node:path";
import { loadJson, root } from "./lib.mjs";

const file = process.argv[2] ?? "bench/data/queries-holdout.json";

/** Words that name a server's product in a task ("in Linear", "on GitHub"): to count how many tasks name it. */
const PRODUCT = {
  "@modelcontextprotocol/server-github": /github/i,
  "@modelcontextprotocol/server-gitlab": /gitlab/i,
  "@modelcontextprotocol/server-slack": /slack/i,
  "@modelcontextprotocol/server-brave-search": /brave/i,
  "@modelcontextprotocol/server-google-maps": /google maps/i,
  "@modelcontextprotocol/server-postgres": /postgres/i,
  "@modelcontextprotocol/server-redis": /redis/i,
  "@modelcontextprotocol/server-puppeteer": /puppeteer/i,
  "@notionhq/notion-mcp-server": /notion/i,
  "mcp-server-kubernetes": /kubernetes|kubectl|helm|\bk8s\b/i,
  "@wonderwhy-er/desktop-commander": /desktop commander/i,
  "firecrawl-mcp": /firecrawl/i,
  "@playwright/mcp": /playwright/i,
  "exa-mcp-server": /\bexa\b/i,
  "tavily-mcp": /tavily/i,
  "@upstash/context7-mcp": /context7/i,
  "@circleci/mcp-server-circleci": /circleci/i,
  "airtable-mcp-server": /airtable/i,
  "@tacticlaunch/mcp-linear": /linear/i,
  "@gongrzhe/server-gmail-autoauth-mcp": /gmail/i,
  "@sentry/mcp-server": /sentry/i,
  "@hubspot/mcp-server": /hubspot/i,
  "@kimtaeyoon83/mcp-server-youtube-transcript": /youtube/i,
  "@modelcontextprotocol/server-everart": /everart|flux/i,
  "@modelcontextprotocol/server-aws-kb-retrieval": /bedrock|aws/i,
};

const catalog = loadJson("bench/data/catalog.json");
const tools = new Map(catalog.servers.map((s) => [s.package, new Set(s.tools.map((t) => t.name))]));
const versions = new Map(catalog.servers.map((s) => [s.package, s.version]));
const { queries } = loadJson(file);
/** Every other labelled query file in bench/data (queries.json, the holdout sets): a task here must repeat none of them. */
const others = readdirSync(join(root, "bench/data"))
  .filter((f) => /^queries.*\.json$/.test(f) && f !== basename(file))
  .map((f) => `bench/data/${f}`);
const seen = new Map();
for (const other of others) for (const q of loadJson(other).queries) seen.set(q.query.trim().toLowerCase(), other);

const problems = [];
const ids = new Set();
const texts = new Set();
const perServer = new Map(catalog.servers.map((s) => [s.package, { tasks: 0, named: 0, equivalent: 0 }]));
const label = (where, ref) => {
  if (!tools.has(ref?.package)) problems.push(`${where}: no server ${ref?.package} in catalog.json`);
  else if (!tools.get(ref.package).has(ref.tool)) problems.push(`${where}: ${ref.package} has no tool ${ref.tool}`);
};

for (const q of queries) {
  const where = q.id ?? "(no id)";
  if (ids.has(q.id)) problems.push(`${where}: duplicate id`);
  ids.add(q.id);
  if (typeof q.query !== "string" || !q.query.trim()) problems.push(`${where}: empty query`);
  const text = String(q.query).trim().toLowerCase();
  if (seen.has(text)) problems.push(`${where}: repeats a task in ${seen.get(text)}: "${q.query}"`);
  if (texts.has(text)) problems.push(`${where}: repeats a task in this file: "${q.query}"`);
  texts.add(text);
  label(`${where} expected`, q.expected);
  for (const [i, e] of (q.equivalent ?? []).entries()) {
    label(`${where} equivalent[${i}]`, e);
    if (e.package === q.expected?.package && e.tool === q.expected?.tool) {
      problems.push(`${where}: equivalent[${i}] is the expected tool`);
    }
  }
  const want = `https://www.npmjs.com/package/${q.expected?.package}/v/${versions.get(q.expected?.package)}`;
  if (q.source !== want) problems.push(`${where}: source should be ${want}`);
  const row = perServer.get(q.expected?.package);
  if (row) {
    row.tasks++;
    if (PRODUCT[q.expected.package]?.test(q.query)) row.named++;
    if (q.equivalent?.length) row.equivalent++;
  }
}

const rows = [...perServer].sort((a, b) => b[1].tasks - a[1].tasks);
const width = Math.max(...rows.map(([p]) => p.length));
console.log(`${file}: ${queries.length} tasks, ${ids.size} ids; checked for repeats against ${others.join(", ")}\n`);
console.log(`${"server".padEnd(width)}  tools  tasks  named  with equivalent`);
for (const [pkg, r] of rows) {
  const named = PRODUCT[pkg] ? String(r.named) : "-";
  console.log(
    `${pkg.padEnd(width)}  ${String(tools.get(pkg).size).padStart(5)}  ${String(r.tasks).padStart(5)}  ${named.padStart(5)}  ${String(r.equivalent).padStart(15)}`,
  );
}
const named = rows.reduce((n, [, r]) => n + r.named, 0);
const uncovered = rows.filter(([, r]) => r.tasks === 0).map(([p]) => p);
console.log(
  `\nnamed the product: ${named} of ${queries.length}; with equivalents: ${rows.reduce((n, [, r]) => n + r.equivalent, 0)}`,
);
if (uncovered.length) problems.push(`servers without a task: ${uncovered.join(", ")}`);
if (problems.length) {
  console.error(`\n${problems.length} problem(s):\n${problems.join("\n")}`);
  process.exit(1);
}
console.log("ok");
