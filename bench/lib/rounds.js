/** @module Interleaved rounds: every target runs a slice of the same phase in turn, so drift hits all alike. */
import { medians, phase } from "./load.js";

/** Starts each target in front of `up` (all at once); one that cannot start is recorded as skipped, not fatal. */
export async function startAll(list, ctx, up, log) {
  const skipped = {};
  const started = await Promise.all(
    list.map(async (t) => {
      const why = t.skip?.();
      if (why) {
        skipped[t.name] = why;
        log(`  ${t.name}: skipped, ${why}`);
        return undefined;
      }
      try {
        return { target: t, handle: await t.start(ctx, up) };
      } catch (err) {
        skipped[t.name] = `did not start: ${String(err.message).split("\n")[0].slice(0, 300)}`;
        log(`  ${t.name}: ${skipped[t.name]}`);
        return undefined;
      }
    }),
  );
  return { running: started.filter(Boolean), skipped };
}

/** Opens `n` sessions per target (one shared one where the target has no sessions: stdio, direct). */
export async function openSessions(running, n, log) {
  const ok = [];
  for (const r of running) {
    try {
      const count = r.handle.sessions ? n : 1;
      r.sessions = [];
      for (let i = 0; i < count; i += 8) {
        const wave = [];
        for (let j = i; j < Math.min(count, i + 8); j++) wave.push(r.handle.newSession());
        r.sessions.push(...(await Promise.all(wave)));
      }
      ok.push(r);
    } catch (err) {
      r.error = `sessions: ${err.message}`;
      log(`  ${r.target.name}: ${r.error}`);
    }
  }
  return ok;
}

/**
 * For each round, for each phase, each target in turn (rotated per round) runs `sliceMs` of calls (a phase with
 * `applies(r)` only for the targets it applies to).
 * Returns per target and phase the medians across rounds, plus the raw rounds.
 */
export async function interleave(running, phases, rounds, sliceMs, log) {
  const raw = new Map(running.map((r) => [r, Object.fromEntries(phases.map((p) => [p.name, []]))]));
  let alive = [...running];
  for (let round = 0; round < rounds; round++) {
    const order = alive.map((_, i) => alive[(i + round) % alive.length]);
    for (const p of phases) {
      for (const r of order) {
        if (r.error || (p.applies && !p.applies(r))) continue;
        try {
          const result = await phase(r.sessions, p.width, p.ms ?? sliceMs, (s) => p.op(s, r), r.handle.pid);
          raw.get(r)[p.name].push(result);
        } catch (err) {
          r.error = `${p.name}, round ${round + 1}: ${err.message}`;
          log(`  ${r.target.name} failed: ${r.error}`);
        }
      }
    }
    alive = alive.filter((r) => !r.error);
    log(`  round ${round + 1}/${rounds} done`);
  }
  const out = {};
  for (const r of running) {
    const phasesOut = {};
    for (const p of phases) phasesOut[p.name] = medians(raw.get(r)[p.name]);
    out[r.target.name] = { ...phasesOut, ...(r.error ? { error: r.error } : {}), rounds: raw.get(r) };
  }
  return out;
}

/**
 * Unmeasured calls so every target is past JIT warm-up and connection setup before round 1: each target runs
 * each phase for at least `ms`, and on until it has made `minCalls` calls or `capMs` have passed. A count, not
 * a time: V8 optimizes a function after enough runs of it; a fresh toolpacks costs 3–4× its steady CPU per call
 * for its first ~1,000 calls and is steady only after ~3,000 (with --no-opt it stays at ~2.5×), so 600 ms of a
 * target that makes 1,500 calls/s is not enough. The targets take turns in slices of at most 500 ms, as in the
 * rounds: warmed one after the other, the first ones sat idle for half a minute or more before round 1 and then
 * often measured 20–100 % above the same build warmed last (bare node:http never did).
 */
export async function warmUp(running, phases, ms, { minCalls = 0, capMs = ms } = {}) {
  const slice = Math.min(ms, 500);
  const made = new Map();
  for (let more = true; more; ) {
    more = false;
    for (const p of phases) {
      for (const r of running) {
        if (r.error || (p.applies && !p.applies(r))) continue;
        const key = `${p.name}\u0000${r.target.name}`;
        const done = made.get(key) ?? { calls: 0, ms: 0 };
        if (done.ms >= ms && (done.calls >= minCalls || done.ms >= capMs)) continue;
        more = true;
        try {
          const t0 = Date.now();
          done.calls += (await phase(r.sessions, p.width, slice, (s) => p.op(s, r), r.handle.pid)).calls;
          done.ms += Date.now() - t0;
          made.set(key, done);
        } catch (err) {
          r.error = `warm-up: ${err.message}`;
        }
      }
    }
  }
}
