/**
 * @module Start-up side by side: the first tools/list of the upstreams spawned alone (as a client launching them
 * itself would get it) against the first tools/list through toolpacks over stdio and over HTTP, fresh processes,
 * interleaved rounds, medians, beside Node's own start (`node -e 0`: the floor of any proxy that runs on Node).
 * Cases: one upstream (server-everything), and the example's default selection.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { closePool, HttpSession } from "./http-client.js";
import { median } from "./load.js";
import { cpuMicros, start, stop, waitForStderr } from "./proc.js";
import { StdioSession } from "./stdio-client.js";
import { cliPath, LISTENING } from "./targets.js";

const bin = (root, name) => join(root, "node_modules/.bin", name);

/** The cases: what a client would spawn itself, and the toolpacks config and selection serving the same. */
export function startupCases(root, tmp) {
  const one = join(tmp, "startup-one.yaml");
  writeFileSync(one, `upstreams:\n  everything:\n    command: ${bin(root, "mcp-server-everything")}\n`);
  return [
    {
      name: "one upstream",
      what: "server-everything",
      upstreams: [{ command: bin(root, "mcp-server-everything"), args: [] }],
      config: one,
    },
    {
      name: "example defaults",
      what: "server-everything + server-filesystem (packs.example.yaml, default selection)",
      upstreams: [
        { command: bin(root, "mcp-server-everything"), args: [] },
        { command: bin(root, "mcp-server-filesystem"), args: ["examples/workspace"] },
      ],
      config: join(root, "packs.example.yaml"),
    },
  ];
}

const env = (root) => ({
  ...process.env,
  PATH: `${join(root, "node_modules/.bin")}:${process.env.PATH ?? ""}`,
});

/**
 * Spawn → initialize → tools/list over stdio: ms from spawn to the answer, the process's own CPU ms by then (its
 * children's not included), and how many tools it listed.
 */
async function stdioFirstList(root, command, args) {
  const t0 = performance.now();
  const child = start(command, args, { cwd: root, env: env(root), stdout: true });
  try {
    const s = await new StdioSession(child).initialize();
    const { result } = await s.listTools();
    return { ms: performance.now() - t0, cpuMs: cpuMicros(child.pid) / 1000, tools: result.tools.length };
  } finally {
    await stop(child);
  }
}

/** The upstreams spawned at once, as a client would: done when the slowest has answered tools/list. */
async function direct(root, c) {
  const t0 = performance.now();
  const each = await Promise.all(c.upstreams.map((u) => stdioFirstList(root, u.command, u.args)));
  return {
    ms: performance.now() - t0,
    tools: each.reduce((n, e) => n + e.tools, 0),
    each: each.map((e) => e.ms),
  };
}

/**
 * The floor of any proxy written for Node: a `node` process that does nothing (`node -e 0`), spawn to exit. A
 * proxy cannot spawn its upstreams before its runtime has started; what toolpacks adds past this is its own.
 */
async function nodeStart(root) {
  const t0 = performance.now();
  const child = start(process.execPath, ["-e", "0"], { cwd: root, env: env(root) });
  await new Promise((done) => child.once("exit", done));
  return { ms: performance.now() - t0 };
}

function viaStdio(root, c) {
  return stdioFirstList(root, "node", [cliPath(root), "serve", "--transport", "stdio", c.config]);
}

async function viaHttp(root, c) {
  const t0 = performance.now();
  const args = [cliPath(root), "serve", "--port", "0", "--host", "127.0.0.1", c.config];
  const child = start("node", args, { cwd: root, env: env(root) });
  let url;
  try {
    url = (await waitForStderr(child, LISTENING))[1];
    const listening = performance.now() - t0;
    const s = await new HttpSession(url).initialize();
    const { result } = await s.listTools();
    const ms = performance.now() - t0;
    const cpuMs = cpuMicros(child.pid) / 1000;
    s.close();
    return { ms, cpuMs, tools: result.tools.length, listening };
  } finally {
    if (url) await closePool(url);
    await stop(child);
  }
}

/**
 * `runs` rounds; in each, every case runs direct, toolpacks-stdio and toolpacks-http once, the order rotated per
 * round so drift on a shared machine hits all three alike. Returns per case the medians and the raw figures.
 */
export async function startupSideBySide(root, tmp, runs, log) {
  const cases = startupCases(root, tmp);
  const ways = [
    ["direct", direct],
    ["stdio", viaStdio],
    ["http", viaHttp],
    ["node", nodeStart],
  ];
  const raw = cases.map(() => Object.fromEntries(ways.map(([w]) => [w, []])));
  for (let round = 0; round < runs; round++) {
    for (const [i, c] of cases.entries()) {
      for (let k = 0; k < ways.length; k++) {
        const [way, fn] = ways[(k + round) % ways.length];
        raw[i][way].push(await fn(root, c));
      }
    }
    log?.(`  start-up round ${round + 1}/${runs} done`);
  }
  return cases.map((c, i) => {
    const r = raw[i];
    const med = (w, key = "ms") => median(r[w].map((x) => x[key]));
    const d = med("direct");
    return {
      name: c.name,
      what: c.what,
      runs,
      direct: d,
      stdio: med("stdio"),
      http: med("http"),
      httpListening: med("http", "listening"),
      stdioCpu: med("stdio", "cpuMs"),
      httpCpu: med("http", "cpuMs"),
      nodeStart: med("node"),
      stdioOver: med("stdio") - d,
      httpOver: med("http") - d,
      tools: { direct: r.direct[0]?.tools, stdio: r.stdio[0]?.tools, http: r.http[0]?.tools },
      rounds: r,
    };
  });
}
