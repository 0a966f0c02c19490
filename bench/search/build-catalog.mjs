/** @module Builds bench/data/catalog.json: real MCP servers from npm, installed apart from the project, asked for their tools offline. */
// Usage: node bench/search/build-catalog.mjs [--only pkg,pkg] [--keep-going]
// Each server is installed (with --ignore-scripts: no browser or binary download) into its own folder
// under bench/.catalog-servers/ (ignored by git), started over stdio with dummy credentials and a
// throw-away HOME, and asked for tools/list with the SDK client. Nothing is called; the network is
// not needed after the install. Left out because they cannot list offline: @supabase/mcp-server-supabase
// (fetches at tools/list), @heroku/mcp-server 1.2.8 (broken import), @benborla29/mcp-server-mysql (needs a
// live MySQL), @atlassian-dc-mcp/jira (a dependency 404s at install).
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { z } from "zod";
import { freePort } from "../lib/proc.js";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "..", "..");
const installRoot = join(root, "bench", ".catalog-servers");
const out = join(root, "bench", "data", "catalog.json");

/** Exact versions: the catalog must be rebuildable to the same bytes. */
const SERVERS = [
  { package: "@modelcontextprotocol/server-everything", version: "2026.8.31", args: ["stdio"] },
  { package: "@modelcontextprotocol/server-filesystem", version: "2026.8.31", args: ["{tmp}"] },
  {
    package: "@modelcontextprotocol/server-memory",
    version: "2026.8.31",
    env: { MEMORY_FILE_PATH: "{tmp}/memory.jsonl" },
  },
  { package: "@modelcontextprotocol/server-sequential-thinking", version: "2026.8.31" },
  {
    package: "@modelcontextprotocol/server-github",
    version: "2025.4.8",
    env: { GITHUB_PERSONAL_ACCESS_TOKEN: "dummy" },
  },
  {
    package: "@modelcontextprotocol/server-gitlab",
    version: "2025.4.25",
    env: { GITLAB_PERSONAL_ACCESS_TOKEN: "dummy", GITLAB_API_URL: "http://127.0.0.1:9/api/v4" },
  },
  {
    package: "@modelcontextprotocol/server-slack",
    version: "2025.4.25",
    env: { SLACK_BOT_TOKEN: "xoxb-dummy", SLACK_TEAM_ID: "T0000" },
  },
  { package: "@modelcontextprotocol/server-brave-search", version: "0.6.2", env: { BRAVE_API_KEY: "dummy" } },
  {
    package: "@modelcontextprotocol/server-google-maps",
    version: "0.6.2",
    env: { GOOGLE_MAPS_API_KEY: "dummy" },
  },
  {
    package: "@modelcontextprotocol/server-postgres",
    version: "0.6.2",
    args: ["postgresql://127.0.0.1:9/dummy"],
  },
  // Connects at start: a throw-away redis-server on a loopback port is started for it (skipped without one).
  {
    package: "@modelcontextprotocol/server-redis",
    version: "2025.4.25",
    args: ["redis://127.0.0.1:{redisPort}"],
    redis: true,
  },
  { package: "@modelcontextprotocol/server-puppeteer", version: "2025.5.12" },
  { package: "@notionhq/notion-mcp-server", version: "2.5.2", env: { NOTION_TOKEN: "ntn_dummy" } },
  { package: "mcp-server-kubernetes", version: "4.1.7" },
  { package: "@wonderwhy-er/desktop-commander", version: "0.2.52" },
  { package: "firecrawl-mcp", version: "3.26.0", env: { FIRECRAWL_API_KEY: "fc-dummy" } },
  { package: "@playwright/mcp", version: "0.0.83", args: ["--headless"] },
  { package: "exa-mcp-server", version: "3.4.1", env: { EXA_API_KEY: "dummy" } },
  { package: "tavily-mcp", version: "0.2.22", env: { TAVILY_API_KEY: "tvly-dummy" } },
  { package: "@upstash/context7-mcp", version: "4.1.1" },
  { package: "@circleci/mcp-server-circleci", version: "0.20.0", env: { CIRCLECI_TOKEN: "dummy" } },
  { package: "airtable-mcp-server", version: "1.14.0", env: { AIRTABLE_API_KEY: "pat.dummy" } },
  { package: "@tacticlaunch/mcp-linear", version: "1.4.3", env: { LINEAR_API_TOKEN: "lin_api_dummy" } },
  {
    package: "@gongrzhe/server-gmail-autoauth-mcp",
    version: "1.1.11",
    files: {
      ".gmail-mcp/gcp-oauth.keys.json":
        '{"installed":{"client_id":"dummy","client_secret":"dummy","redirect_uris":["http://127.0.0.1:9"]}}',
      ".gmail-mcp/credentials.json": '{"access_token":"dummy","refresh_token":"dummy"}',
    },
  },
  { package: "@sentry/mcp-server", version: "0.39.0", args: ["--access-token=dummy"] },
  { package: "@hubspot/mcp-server", version: "0.4.0", env: { PRIVATE_APP_ACCESS_TOKEN: "dummy" } },
  { package: "@kimtaeyoon83/mcp-server-youtube-transcript", version: "0.1.1" },
  { package: "@modelcontextprotocol/server-everart", version: "0.6.2", env: { EVERART_API_KEY: "dummy" } },
  {
    package: "@modelcontextprotocol/server-aws-kb-retrieval",
    version: "0.6.2",
    env: { AWS_ACCESS_KEY_ID: "dummy", AWS_SECRET_ACCESS_KEY: "dummy", AWS_REGION: "us-east-1" },
  },
];

function folderOf(pkg) {
  return join(installRoot, pkg.replace(/^@/, "").replace(/\//g, "__"));
}

function install(server) {
  const dir = folderOf(server.package);
  const pkgDir = join(dir, "node_modules", server.package);
  const have = existsSync(join(pkgDir, "package.json"))
    ? JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")).version
    : undefined;
  if (have === server.version) return pkgDir;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ private: true }));
  const r = spawnSync(
    "npm",
    [
      "install",
      "--no-audit",
      "--no-fund",
      "--ignore-scripts",
      "--save-exact",
      `${server.package}@${server.version}`,
    ],
    { cwd: dir, stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" },
  );
  if (r.status !== 0)
    throw new Error(`npm install failed: ${r.stderr.trim().split("\n").slice(-3).join(" | ")}`);
  return pkgDir;
}

function binOf(pkgDir) {
  const meta = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
  const bins = typeof meta.bin === "string" ? { [meta.name]: meta.bin } : (meta.bin ?? {});
  const names = Object.keys(bins);
  if (names.length === 0) throw new Error("package has no bin");
  // The one named like the package, else the first: packages with several bins list the server first.
  const base = meta.name.split("/").pop();
  const name = names.find((n) => n === base) ?? names[0];
  return { name, path: join(pkgDir, bins[name]), version: meta.version, description: meta.description ?? "" };
}

const LooseList = z.looseObject({
  tools: z.array(z.looseObject({ name: z.string() })),
  nextCursor: z.string().optional(),
});

function fill(value, vars) {
  return value.replace(/\{(\w+)\}/g, (m, k) => vars[k] ?? m);
}

/** A redis-server with no persistence on a loopback port; resolves once it accepts connections. */
async function startRedis() {
  const port = await freePort();
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    {
      stdio: ["ignore", "pipe", "ignore"],
    },
  );
  await new Promise((ok, fail) => {
    child.once("error", fail);
    child.stdout.on("data", (b) => {
      if (b.toString().includes("Ready to accept connections")) ok();
    });
  });
  return { port, stop: () => child.kill("SIGTERM") };
}

async function listTools(server, bin) {
  const home = mkdtempSync(join(tmpdir(), "catalog-home-"));
  const redis = server.redis ? await startRedis() : undefined;
  const vars = { tmp: home, redisPort: String(redis?.port ?? 9) };
  for (const [file, text] of Object.entries(server.files ?? {})) {
    mkdirSync(dirname(join(home, file)), { recursive: true });
    writeFileSync(join(home, file), text);
  }
  const env = {
    PATH: process.env.PATH ?? "",
    HOME: home,
    NODE_ENV: "production",
    // Keep servers from phoning home or downloading at start.
    DO_NOT_TRACK: "1",
    PUPPETEER_SKIP_DOWNLOAD: "1",
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: "1",
  };
  for (const [k, v] of Object.entries(server.env ?? {})) env[k] = fill(v, vars);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin.path, ...(server.args ?? []).map((a) => fill(a, vars))],
    env,
    cwd: home,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (b) => {
    stderr = (stderr + b.toString()).slice(-2000);
  });
  const client = new Client({ name: "toolpacks-catalog", version: "0" });
  try {
    await client.connect(transport, { timeout: 60_000 });
    const tools = [];
    let cursor;
    do {
      // Raw tools/list: definitions exactly as the server sends them (the SDK's typed listTools rejects
      // e.g. server-gitlab's schemas, whose root lacks type "object", and would drop nothing we need).
      const page = await client.request(
        { method: "tools/list", params: cursor ? { cursor } : {} },
        LooseList,
        {
          timeout: 60_000,
        },
      );
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  } catch (err) {
    throw new Error(`${err.message}; stderr: ${stderr.trim().split("\n").slice(-3).join(" | ")}`);
  } finally {
    await client.close().catch(() => {});
    redis?.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

async function main() {
  const only = process.argv.includes("--only")
    ? process.argv[process.argv.indexOf("--only") + 1].split(",")
    : null;
  const previous = existsSync(out) ? JSON.parse(readFileSync(out, "utf8")) : { servers: [] };
  const servers = [];
  const failed = [];
  for (const server of SERVERS) {
    if (only && !only.includes(server.package)) {
      const kept = previous.servers.find((s) => s.package === server.package);
      if (kept) servers.push(kept);
      continue;
    }
    const t0 = Date.now();
    try {
      const bin = binOf(install(server));
      const tools = await listTools(server, bin);
      servers.push({
        package: server.package,
        version: bin.version,
        description: bin.description,
        bin: bin.name,
        tools,
      });
      console.log(`ok   ${server.package}@${bin.version}: ${tools.length} tools (${Date.now() - t0} ms)`);
    } catch (err) {
      failed.push(server.package);
      console.log(`FAIL ${server.package}@${server.version}: ${err.message}`);
    }
  }
  const total = servers.reduce((n, s) => n + s.tools.length, 0);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify({ servers }, null, 1)}\n`);
  console.log(
    `${servers.length} servers, ${total} tools → ${out}${failed.length ? `; failed: ${failed.join(", ")}` : ""}`,
  );
  if (servers.length < 8 || total < 300) process.exitCode = 1;
}

await main();
