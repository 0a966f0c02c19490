/** @module Child processes for the bench: spawn, readiness, CPU and RSS from /proc, and cleanup of whole trees. */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { connect, createServer } from "node:net";

const TICK_US = 1e6 / 100; // USER_HZ is 100 on Linux
const PAGE = 4096;
const live = new Set();
/** Processes spawned by others (the SDK's stdio transport) that we still must not leave behind. */
const loose = new Set();

export function track(pid) {
  if (pid) loose.add(pid);
}

/**
 * CPU time of one process (all its threads, not its children), in µs; NaN once it is gone. The threads'
 * schedstat runtimes have ns resolution; utime + stime from /proc/<pid>/stat (10 ms ticks) is the fallback.
 */
export function cpuMicros(pid) {
  try {
    let ns = 0;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
      } catch {
        // thread exited meanwhile
      }
    }
    if (ns > 0) return ns / 1000;
  } catch {
    // no schedstat here: use the ticks
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) * TICK_US;
  } catch {
    return Number.NaN;
  }
}

/** Resident set size in bytes; NaN once it is gone. */
export function rssBytes(pid) {
  try {
    return Number(readFileSync(`/proc/${pid}/statm`, "utf8").split(" ")[1]) * PAGE;
  } catch {
    return Number.NaN;
  }
}

/** Every process below `pid` (children, grandchildren…), found through /proc. */
export function descendants(pid) {
  const parent = new Map();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone meanwhile
    }
  }
  const out = [];
  const queue = [pid];
  while (queue.length) {
    const p = queue.shift();
    for (const [child, pp] of parent) {
      if (pp === p) {
        out.push(child);
        queue.push(child);
      }
    }
  }
  return out;
}

/** Sum of RSS of everything below `pid` (the upstream processes a proxy started). */
export function descendantsRss(pid) {
  return descendants(pid).reduce((sum, p) => sum + (rssBytes(p) || 0), 0);
}

/**
 * Spawns a tracked child in its own process group. stderr is kept (last 4 KB) for error messages and can be
 * watched for a line; stdout is piped only when asked for (a stdio protocol), else ignored.
 */
export function start(command, args, { stdout = false, cwd, env } = {}) {
  const child = spawn(command, args, {
    cwd,
    env: env ?? process.env,
    detached: true,
    stdio: ["pipe", stdout ? "pipe" : "ignore", "pipe"],
  });
  child.tail = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (s) => {
    child.tail = (child.tail + s).slice(-4096);
  });
  child.on("error", (err) => {
    child.tail += `\nspawn error: ${err.message}`;
  });
  live.add(child);
  child.on("exit", () => live.delete(child));
  return child;
}

/** Resolves with the first match of `re` on the child's stderr; rejects on exit or timeout. */
export function waitForStderr(child, re, timeoutMs = 15000) {
  return new Promise((resolve, reject) => {
    let buf = "";
    const done = (fn, v) => {
      clearTimeout(timer);
      child.stderr.off("data", onData);
      child.off("exit", onExit);
      fn(v);
    };
    const onData = (s) => {
      buf += s;
      const m = re.exec(buf);
      if (m) done(resolve, m);
    };
    const onExit = (code) => done(reject, new Error(`exited (${code}) before ready: ${child.tail.trim()}`));
    const timer = setTimeout(
      () => done(reject, new Error(`not ready in ${timeoutMs} ms: ${child.tail.trim()}`)),
      timeoutMs,
    );
    child.stderr.on("data", onData);
    child.once("exit", onExit);
  });
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** Polls until something accepts connections on the port (peers print no machine-readable ready line). */
export async function waitForPort(child, port, timeoutMs = 20000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode)
      throw new Error(`exited before ready: ${child.tail.trim()}`);
    const ok = await new Promise((resolve) => {
      const s = connect(port, "127.0.0.1");
      s.once("connect", () => {
        s.destroy();
        resolve(true);
      });
      s.once("error", () => resolve(false));
    });
    if (ok) return;
    await sleep(50);
  }
  throw new Error(`port ${port} not open in ${timeoutMs} ms: ${child.tail.trim()}`);
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function signal(pids, sig) {
  for (const p of pids) {
    try {
      process.kill(p, sig);
    } catch {
      // already gone
    }
  }
}

/** A zombie counts as gone: it holds no memory and no port, only a slot until someone reaps it. */
const alive = (pid) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat[stat.lastIndexOf(")") + 2] !== "Z";
  } catch {
    return false;
  }
};

/** SIGTERM the child's tree and group, then SIGKILL whatever is left after `graceMs`. */
export async function stop(child, graceMs = 500) {
  if (!child?.pid) return;
  const tree = [child.pid, ...descendants(child.pid)];
  signal([-child.pid, ...tree], "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && tree.some(alive)) await sleep(25);
  signal([-child.pid, ...tree], "SIGKILL");
  live.delete(child);
}

export async function stopAll() {
  await Promise.all([...live].map((c) => stop(c)));
}

/** Last resort on exit: kill every tracked tree at once, synchronously. */
export function killAllSync() {
  for (const child of live) {
    if (!child.pid) continue;
    signal([-child.pid, child.pid, ...descendants(child.pid)], "SIGKILL");
  }
  signal([...loose], "SIGKILL");
  live.clear();
  loose.clear();
}
