/**
 * @module `npm run bench`: every target in front of the same stdio upstreams, interleaved in rounds, each figure
 * a ratio to the others of the same run. Writes bench/results/latest.md and latest.json.
 *
 * Env: BENCH_QUICK=1 (a ~30 s smoke run), BENCH_ROUNDS, BENCH_SLICE_MS, BENCH_SESSIONS (memory phase, 500),
 * BENCH_SG_SESSIONS (supergateway's cap there: one upstream process per session), BENCH_TARGETS (comma list),
 * BENCH_SKIP (comma list of: everything, memory, abuse, library, startup, example, search, state, console),
 * BENCH_ECHO_SERVER (another echo fixture),
 * BENCH_OUT (results folder).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { consoleFirstLoad } from "./console.mjs";
import { abuseFigures } from "./lib/abuse.js";
import { selectionBytes } from "./lib/example.js";
import { handleFlow } from "./lib/handles.js";
import { closeAgents } from "./lib/http-client.js";
import { exampleSelections, resolveTiming } from "./lib/library.js";
import { phase } from "./lib/load.js";
import { sessionMemory } from "./lib/memory.js";
import { killAllSync, rssBytes, start, stopAll } from "./lib/proc.js";
import { markdown, verdicts } from "./lib/report.js";
import { interleave, openSessions, startAll, warmUp } from "./lib/rounds.js";
import { startupSideBySide } from "./lib/startup.js";
import { stateBench, stateMarkdown } from "./lib/state.js";
import { targets, upstreams } from "./lib/targets.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const env = process.env;
const quick = env.BENCH_QUICK === "1";
const num = (v, d) => (v !== undefined && v !== "" && Number.isFinite(Number(v)) ? Number(v) : d);
const settings = {
  mode: quick ? "quick" : "full",
  rounds: num(env.BENCH_ROUNDS, quick ? 2 : 5),
  sliceMs: num(env.BENCH_SLICE_MS, quick ? 200 : 1000),
  sessions: num(env.BENCH_SESSIONS, quick ? 30 : 500),
  sgSessions: num(env.BENCH_SG_SESSIONS, quick ? 5 : 50),
  warmMs: quick ? 100 : 1500,
  // Each warm-up phase goes on to this many calls (at most warmCapMs): JIT warm-up is counted in calls.
  warmCalls: quick ? 0 : 3000,
  warmCapMs: quick ? 100 : 4000,
  settleMs: quick ? 300 : 700,
  // A quick run opens 16 sessions and runs the 64-wide phase over them (supergateway spawns per session).
  loadSessions: quick ? 16 : 64,
  everythingRounds: quick ? 1 : 5,
  startupRuns: num(env.BENCH_STARTUP_ROUNDS, quick ? 1 : 7),
  resolveIterations: quick ? 50 : 300,
  only: env.BENCH_TARGETS ? env.BENCH_TARGETS.split(",") : undefined,
  skip: new Set((env.BENCH_SKIP ?? "").split(",").filter(Boolean)),
};
const outDir = resolve(env.BENCH_OUT ?? join(root, "bench/results"));
const t0 = Date.now();
const log = (s) => process.stderr.write(`[bench ${((Date.now() - t0) / 1000).toFixed(1)}s] ${s}\n`);

const tmp = mkdtempSync(join(tmpdir(), "toolpacks-bench-"));
process.on("exit", () => {
  killAllSync();
  rmSync(tmp, { recursive: true, force: true });
});
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(sig, () => {
    log(`${sig}: stopping children`);
    process.exit(130);
  });
}

const ups = upstreams(root);
if (env.BENCH_ECHO_SERVER) ups.echo.args = [resolve(env.BENCH_ECHO_SERVER)];
const ctx = { root, tmp };
const all = targets(root).filter((t) => !settings.only || settings.only.includes(t.name));
const results = {
  meta: {
    date: new Date().toISOString(),
    node: process.versions.node,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model?.trim() ?? "?",
    loadStart: loadavg()[0].toFixed(2),
    ...settings,
    skip: [...settings.skip],
    echoServer: ups.echo.args[0],
  },
  echo: {},
  everything: {},
  library: {},
  startup: {},
  example: {},
  abuse: {},
  search: {},
  state: {},
  console: undefined,
  notes: [],
};
for (const t of all)
  results.echo[t.name] = { label: t.label, kind: t.kind, ...(t.note ? { note: t.note } : {}) };

const call = (up) => (s) => s.call(up.tool, up.arguments);
const warm = { minCalls: settings.warmCalls, capMs: settings.warmCapMs };

async function echoRounds() {
  const up = ups.echo;
  log(`echo: starting ${all.length} targets`);
  const { running, skipped } = await startAll(all, ctx, up, log);
  for (const [n, why] of Object.entries(skipped)) results.echo[n].skipped = why;
  const ready = await openSessions(running, settings.loadSessions, log);
  for (const r of running) if (r.error) results.echo[r.target.name].skipped = r.error;
  const phases = [
    { name: "seq", width: 1, op: call(up) },
    { name: "c16", width: 16, op: call(up) },
    { name: "c64", width: 64, op: call(up) },
  ];
  log("echo: warm-up");
  await warmUp(ready, phases, settings.warmMs, warm);
  log(`echo: ${settings.rounds} rounds × ${ready.length} targets × ${phases.length} phases`);
  const measured = await interleave(ready, phases, settings.rounds, settings.sliceMs, log);
  for (const [n, m] of Object.entries(measured)) Object.assign(results.echo[n], m);
  await Promise.all(running.map((r) => r.handle.stop()));
}

/**
 * server-everything's echo, with each toolpacks target also in front of the echo fixture ("twins") in the same
 * rounds: what the upstream changes is read from one interleave, never across sections (the echo section's
 * figures come from processes warmed by thousands of c16/c64 calls).
 */
async function everythingRounds() {
  const up = ups.everything;
  const list = all.filter((t) => !t.echoOnly);
  const twins = list
    .filter((t) => t.kind === "toolpacks")
    .map((t) => ({ ...t, name: `${t.name}+fixture`, twinOf: t.name }));
  log(`everything: starting ${list.length} targets, and ${twins.length} in front of the echo fixture`);
  const { running, skipped } = await startAll(list, ctx, up, log);
  const fixture = await startAll(twins, ctx, ups.echo, log);
  for (const r of running) r.up = up;
  for (const r of fixture.running) r.up = ups.echo;
  running.push(...fixture.running);
  for (const [n, why] of Object.entries(skipped)) results.everything[n] = { skipped: why };
  const ready = await openSessions(running, 1, log);
  for (const r of ready) {
    if (r.target.twinOf) continue;
    try {
      const { result, bytes } = await r.sessions[0].listTools();
      results.everything[r.target.name] = { tools: result.tools.length, bytes };
    } catch (err) {
      r.error = `tools/list: ${err.message}`;
    }
  }
  const own = (r) => !r.target.twinOf;
  const phases = [
    { name: "echo", width: 1, op: (s, r) => s.call(r.up.tool, r.up.arguments) },
    { name: "list", width: 1, op: (s) => s.listTools(), applies: own },
  ];
  await warmUp(ready, phases, Math.min(600, settings.warmMs), warm);
  const measured = await interleave(
    ready,
    phases,
    settings.everythingRounds,
    Math.min(600, settings.sliceMs),
    log,
  );
  for (const [n, m] of Object.entries(measured)) {
    const twin = twins.find((t) => t.name === n);
    if (twin) {
      results.everything[twin.twinOf] = {
        ...results.everything[twin.twinOf],
        fixtureEcho: m.echo,
        ...(m.error ? { fixtureError: m.error } : {}),
      };
      continue;
    }
    results.everything[n] = {
      ...results.everything[n],
      echo: m.echo,
      list: m.list,
      ...(m.error ? { error: m.error } : {}),
    };
  }
  await Promise.all(running.map((r) => r.handle.stop()));
}

/** Fresh processes, one at a time: RSS idle, then with N sessions each holding its GET stream. */
async function memory() {
  const up = ups.echo;
  for (const t of all) {
    const entry = results.echo[t.name];
    if (entry.skipped) continue;
    let handle;
    try {
      handle = await t.start(ctx, up);
      if (!handle.sessions) {
        // No sessions to open (stdio, direct): RSS idle after a short warm-up only.
        const s = await handle.newSession();
        await phase([s], 1, 200, call(up), handle.pid);
        entry.memory = { idleRss: rssBytes(handle.pid), sessions: 0 };
        continue;
      }
      const n = handle.perSessionUpstream
        ? Math.min(settings.sgSessions, settings.sessions)
        : settings.sessions;
      log(`memory: ${t.name}, ${n} sessions`);
      entry.memory = await sessionMemory(handle, up, n, { settleMs: settings.settleMs });
    } catch (err) {
      entry.memory = { error: err.message };
      log(`memory: ${t.name} failed: ${err.message}`);
    } finally {
      await handle?.stop();
    }
  }
}

/** toolpacks-http under an abusive client: RSS and honest calls/s per abuse. */
async function abuse() {
  if (results.echo["toolpacks-http"]?.skipped) return;
  try {
    results.abuse = await abuseFigures(
      root,
      tmp,
      ups.echo,
      { sliceMs: quick ? 1500 : 5000, settleMs: settings.settleMs },
      log,
    );
  } catch (err) {
    results.abuse = { skipped: err.message };
    log(`abuse: skipped, ${err.message}`);
  }
}

async function library() {
  try {
    log("library: resolve() at 2,000 tools × 200 toolsets");
    results.library.resolve = await resolveTiming(root, { iterations: settings.resolveIterations });
  } catch (err) {
    results.library.resolve = { skipped: err.message };
    log(`library: skipped, ${err.message}`);
  }
}

/** First tools/list after spawn: each case's upstreams alone, then through toolpacks over stdio and over HTTP. */
async function startup() {
  try {
    log(`startup: ${settings.startupRuns} interleaved rounds`);
    results.startup.cases = await startupSideBySide(root, tmp, settings.startupRuns, log);
  } catch (err) {
    results.startup.skipped = err.message.split("\n")[0];
    log(`startup: skipped, ${results.startup.skipped}`);
  }
}

async function example() {
  const config = join(root, "packs.example.yaml");
  if (!existsSync(config)) {
    results.example.skipped = "packs.example.yaml missing";
    return;
  }
  try {
    log("example: tools/list bytes per selection");
    const selections = await exampleSelections(root, config);
    results.example.selections = await selectionBytes(root, config, selections, tmp);
  } catch (err) {
    results.example.selections = { skipped: err.message.split("\n")[0] };
    log(`example: selections skipped, ${err.message.split("\n")[0]}`);
  }
  try {
    log("example: a large file read and written back, capture on and off");
    results.example.handles = await handleFlow(root, tmp);
  } catch (err) {
    results.example.handles = { skipped: err.message.split("\n")[0] };
    log(`example: handles skipped, ${err.message.split("\n")[0]}`);
  }
}

/** toolpacks with the memory store, a real Redis, and tracing on: plain calls and a capture-heavy flow. */
async function state() {
  try {
    log("state: memory vs Redis vs tracing on");
    results.state = await stateBench(root, settings, log);
  } catch (err) {
    results.state = { skipped: err.message.split("\n")[0] };
    log(`state: skipped, ${results.state.skipped}`);
  }
}

/**
 * Tool search over 516 real tool definitions: quality, list bytes deferred vs listed, latency at 300 and 5,000.
 * In a process of its own: a search costs what its process's heap makes the collector do, and this one's has
 * grown with every section before it (with 3 million small objects alive, the same searches measured 20–40%
 * slower, wall time, than in a fresh process). The figure is the search's, not the harness's.
 */
async function search() {
  const file = join(tmp, "search.json");
  const child = start(process.execPath, [join(root, "bench/search/run.mjs"), "--json", file], {
    env: { ...process.env, SEARCH_BENCH_ROUNDS: String(quick ? 2 : 5) },
  });
  let partial = "";
  child.stderr.on("data", (d) => {
    const lines = (partial + d).split("\n");
    partial = lines.pop();
    for (const line of lines) if (line.trim()) log(line);
  });
  // `close`, not `exit`: its last words (a stack trace) are read before the error quotes them.
  let late = "";
  const timer = setTimeout(() => {
    late = " (killed: no result in 10 minutes)";
    child.kill("SIGKILL");
  }, 10 * 60_000);
  const [code, signal] = await new Promise((done) => child.on("close", (c, s) => done([c, s])));
  clearTimeout(timer);
  if (code !== 0) {
    throw new Error(
      `the search bench ended with ${signal ?? `exit code ${code}`}${late}: ${child.tail.trim()}`,
    );
  }
  results.search = JSON.parse(readFileSync(file, "utf8"));
}

/** The browser console's first load in chromium: bytes transferred and time to usable (bench/console.mjs). */
async function consolePage() {
  try {
    log("console: first load in chromium");
    results.console = await consoleFirstLoad(root, quick ? 2 : 7);
  } catch (err) {
    results.console = { skipped: err.message.split("\n")[0] };
    log(`console: skipped, ${results.console.skipped}`);
  }
}

function notes() {
  const n = results.notes;
  const sg = results.echo.supergateway?.memory;
  if (sg?.sessions) {
    n.push(
      `supergateway --stateful spawns one upstream per session: its RSS/session is its own process only; ` +
        `measured at ${sg.sessions} sessions (not ${settings.sessions}), its upstreams added ` +
        `${(sg.upstreamPerSession / 1048576).toFixed(1)} MB per session on top.`,
    );
  }
  for (const [name, t] of Object.entries(results.echo)) {
    if (t.skipped) n.push(`${name}: skipped (${t.skipped}).`);
    else if (t.error) n.push(`${name}: ${t.error}.`);
  }
  const skips = [
    ["resolve()", results.library.resolve?.skipped],
    ["first tools/list", results.startup.skipped],
    ["tools/list per selection", results.example.selections?.skipped ?? results.example.skipped],
  ];
  for (const [what, why] of skips) if (why) n.push(`${what}: skipped (${why}).`);
  for (const [name, t] of Object.entries(results.everything)) {
    if (t.skipped || t.error) n.push(`server-everything, ${name}: ${t.skipped ?? t.error}.`);
  }
  n.push(
    "Load comes from a lean client: undici keep-alive pool, hand-written JSON-RPC, SSE or JSON answers (a " +
      "newline-delimited stdio client for toolpacks-stdio). Its own CPU per call is in latest.json " +
      "(clientCpuPerCall). Load client, targets and upstreams share the machine's cores.",
    "RSS per session = (RSS with N sessions, each initialized and holding its GET stream − RSS idle) / N, " +
      "fresh process per target; it includes garbage not yet collected.",
  );
}

async function main() {
  log(`${settings.mode} run; results to ${outDir}`);
  const sections = [
    ["echo", echoRounds],
    ["everything", everythingRounds],
    ["memory", memory],
    ["abuse", abuse],
    ["library", library],
    ["startup", startup],
    ["example", example],
    ["search", search],
    ["state", state],
    ["console", consolePage],
  ];
  if (!existsSync(ups.echo.args[0])) {
    // Without the echo upstream only the library and example figures can be measured.
    results.notes.push(`echo fixture missing (${ups.echo.args[0]}): echo and memory sections skipped.`);
    for (const t of Object.values(results.echo)) t.skipped = "echo fixture missing";
    settings.skip.add("echo").add("memory");
  }
  for (const [name, fn] of sections) {
    if (settings.skip.has(name)) continue;
    try {
      await fn();
    } catch (err) {
      results.notes.push(`section ${name} failed: ${err.message}`);
      log(`${name} failed: ${err.stack ?? err}`);
    } finally {
      await stopAll();
    }
  }
  await closeAgents();
  results.meta.totalSeconds = (Date.now() - t0) / 1000;
  results.meta.loadEnd = loadavg()[0].toFixed(2);
  notes();
  results.targets = verdicts(results);
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, "latest.json"), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(outDir, "latest.md"), `${markdown(results)}\n${stateMarkdown(results.state)}`);
  process.stdout.write(readFileSync(join(outDir, "latest.md"), "utf8"));
  log(`done in ${results.meta.totalSeconds.toFixed(0)} s`);
}

main().then(
  () => process.exit(0),
  (err) => {
    log(`fatal: ${err.stack ?? err}`);
    process.exit(1);
  },
);
