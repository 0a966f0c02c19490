/**
 * @module The state store and tracing under load: toolpacks with the memory store, with a real redis-server,
 * and with tracing on (to an OTLP/HTTP sink in this process), interleaved in rounds. Plain calls must cost
 * the same with either store (they never touch it); a capture-heavy flow (a large result captured, then its
 * handle passed to another tool) shows what the store costs; tracing off must cost nothing.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HttpSession } from "./http-client.js";
import { medians, phase } from "./load.js";
import { cpuMicros, freePort, start, stop, waitForStderr } from "./proc.js";
import { cliPath, LISTENING } from "./targets.js";

const SESSIONS = 16;

/** A redis-server of its own on a free port, no persistence (what is measured is the round trip). */
async function startRedis() {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "toolpacks-bench-redis-"));
  const args = [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    "no",
    "--dir",
    dir,
  ];
  const child = spawn("redis-server", args, { stdio: ["ignore", "pipe", "ignore"] });
  await new Promise((ok, fail) => {
    let out = "";
    child.stdout.on("data", (c) => {
      out += c;
      if (/Ready to accept connections/.test(out)) ok();
    });
    child.once("error", fail);
    child.once("exit", (code) => fail(new Error(`redis-server exited with ${code}`)));
  });
  return {
    url: `redis://127.0.0.1:${port}/0`,
    pid: child.pid,
    stop: () => {
      child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An OTLP/HTTP sink: takes every export and answers 200, counting the spans' bytes. */
async function startSink() {
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on("data", (c) => {
      bytes += c.length;
    });
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end("{}"));
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    bytes: () => bytes,
    stop: () => new Promise((ok) => server.close(ok)),
  };
}

function config(dir, root, tracing) {
  const file = join(dir, `state-${tracing ? "traced" : "plain"}.yaml`);
  const fixture = join(root, "test/fixtures/fixture-server.mjs");
  writeFileSync(
    file,
    `name: bench-state
${tracing ? `tracing: { endpoint: "${tracing}", service_name: bench }\n` : ""}upstreams:
  data: { command: node, args: ["${fixture}", "--tools", "echo", "--big"] }
toolsets:
  plain:
    tools: [data/echo]
  files:
    capture: { over_bytes: 16384 }
    tools: [data/big]
`,
  );
  return file;
}

async function serveTarget(root, file, env) {
  const child = start("node", [cliPath(root), "serve", "--port", "0", "--host", "127.0.0.1", file], {
    cwd: root,
    env: { ...process.env, TOOLPACKS_LOG_LEVEL: "info", ...env },
  });
  const m = await waitForStderr(child, LISTENING);
  const url = m[1];
  const sessions = [];
  for (let i = 0; i < SESSIONS; i++) sessions.push(await new HttpSession(url).initialize());
  return { child, pid: child.pid, url, sessions };
}

const plain = (s) => s.call("echo", { text: "hello" });
/** One flow: a 32 KiB result captured (next + put), then its handle passed to echo (get). */
async function captureFlow(s) {
  const { result } = await s.send("tools/call", { name: "big", arguments: { bytes: 32768 } });
  const handle = result._meta?.["toolpacks/handle"]?.handle;
  if (!handle) throw new Error("big was not captured");
  await s.call("echo", { text: handle });
}

/**
 * Targets × phases × rounds, interleaved. Each figure: flows or calls per second, µs of toolpacks CPU per
 * call, p50, and for the Redis target the redis-server's own CPU per call.
 */
export async function stateBench(root, settings, log) {
  const dir = mkdtempSync(join(tmpdir(), "toolpacks-bench-state-"));
  const redis = await startRedis();
  const sink = await startSink();
  const targets = [
    { name: "memory", file: config(dir, root), env: {} },
    { name: "redis", file: config(dir, root), env: { TOOLPACKS_STATE_STORE: redis.url } },
    { name: "memory+tracing", file: config(dir, root, sink.url), env: {} },
  ];
  const phases = [
    { name: "plainSeq", width: 1, op: plain },
    { name: "plainC16", width: 16, op: plain },
    { name: "captureSeq", width: 1, op: captureFlow },
    { name: "captureC8", width: 8, op: captureFlow },
  ];
  const running = [];
  try {
    for (const t of targets) running.push({ ...t, ...(await serveTarget(root, t.file, t.env)) });
    log(`state: warm-up (${running.length} targets)`);
    for (const r of running)
      for (const p of phases) await phase(r.sessions, p.width, settings.warmMs, p.op, r.pid);
    const raw = Object.fromEntries(
      running.map((r) => [r.name, Object.fromEntries(phases.map((p) => [p.name, []]))]),
    );
    for (let round = 0; round < settings.rounds; round++) {
      for (const p of phases) {
        for (let i = 0; i < running.length; i++) {
          const r = running[(i + round) % running.length];
          const redis0 = cpuMicros(redis.pid);
          const m = await phase(r.sessions, p.width, settings.sliceMs, p.op, r.pid);
          if (r.name === "redis") m.redisCpuPerCall = (cpuMicros(redis.pid) - redis0) / m.calls;
          raw[r.name][p.name].push(m);
        }
      }
      log(`  state: round ${round + 1}/${settings.rounds} done`);
    }
    const out = { sessions: SESSIONS, flow: "big (32 KiB, captured) then echo(handle)", targets: {} };
    for (const r of running) {
      out.targets[r.name] = Object.fromEntries(phases.map((p) => [p.name, medians(raw[r.name][p.name])]));
    }
    out.spanBytesExported = sink.bytes();
    return out;
  } finally {
    for (const r of running) {
      for (const s of r.sessions) s.close();
      await stop(r.child);
    }
    redis.stop();
    await sink.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const fmt = (v, d = 0) =>
  Number.isFinite(v)
    ? v.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d })
    : "–";

/** The section's Markdown: one row per target, ratios to memory. */
export function stateMarkdown(state) {
  if (!state?.targets) return `State store and tracing: ${state?.skipped ?? "not run"}.\n`;
  const base = state.targets.memory;
  const cell = (t, phase, key, d = 0) => {
    const v = t[phase]?.[key];
    const b = base[phase]?.[key];
    return t === base || !Number.isFinite(b) ? fmt(v, d) : `${fmt(v, d)} (${fmt(v / b, 2)}×)`;
  };
  const rows = Object.entries(state.targets).map(
    ([name, t]) =>
      `| ${name} | ${cell(t, "plainSeq", "rps")} | ${cell(t, "plainSeq", "cpuPerCall")} | ${cell(t, "plainC16", "rps")} | ${cell(t, "plainC16", "cpuPerCall")} | ${cell(t, "captureSeq", "rps")} | ${cell(t, "captureSeq", "cpuPerCall")} | ${cell(t, "captureC8", "rps")} | ${cell(t, "captureC8", "cpuPerCall")} | ${fmt(t.captureC8?.redisCpuPerCall)} |`,
  );
  return [
    `State store and tracing (${state.sessions} sessions; flow = ${state.flow}; ratios to memory):`,
    "",
    "| target | plain seq calls/s | plain seq CPU µs/call | plain c16 calls/s | plain c16 CPU µs/call | flow seq flows/s | flow seq CPU µs/flow | flow c8 flows/s | flow c8 CPU µs/flow | redis-server CPU µs/flow c8 |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
    "",
  ].join("\n");
}
