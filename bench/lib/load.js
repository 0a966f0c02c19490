/** @module Load phases: sequential and concurrent calls for a fixed time, with the target's CPU read around them. */
import { performance } from "node:perf_hooks";
import { cpuMicros } from "./proc.js";

export function median(xs) {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return Number.NaN;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

export function percentile(sorted, p) {
  if (!sorted.length) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * Runs `width` loops (one per session, sessions reused round-robin) each calling `op(session)` back to back
 * until `ms` have passed. Returns calls, calls/s, p50/p99 in ms, and µs of the measured pid's CPU per call.
 */
export async function phase(sessions, width, ms, op, pid) {
  const lat = [];
  const cpu0 = cpuMicros(pid);
  const self0 = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + ms;
  let failure;
  const loop = async (s) => {
    while (!failure) {
      const a = performance.now();
      if (a >= end) return;
      try {
        await op(s);
      } catch (err) {
        failure = err;
        return;
      }
      lat.push(performance.now() - a);
    }
  };
  const loops = [];
  for (let i = 0; i < width; i++) loops.push(loop(sessions[i % sessions.length]));
  await Promise.all(loops);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuMicros(pid) - cpu0;
  const self = process.cpuUsage(self0);
  if (failure) throw failure;
  lat.sort((a, b) => a - b);
  const calls = lat.length;
  return {
    calls,
    rps: calls / seconds,
    p50: percentile(lat, 50),
    p99: percentile(lat, 99),
    cpuPerCall: calls ? cpu / calls : Number.NaN,
    clientCpuPerCall: calls ? (self.user + self.system) / calls : Number.NaN,
  };
}

/** Median of each numeric field across rounds. */
export function medians(rounds) {
  if (!rounds.length) return undefined;
  const out = { rounds: rounds.length };
  for (const key of Object.keys(rounds[0])) out[key] = median(rounds.map((r) => r[key]));
  return out;
}
