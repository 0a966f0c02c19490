/**
 * @module Upstream processes started before the proxy has finished loading: the default selection's stdio
 * upstreams boot on the other core while the SDK loads, and their connections adopt them. An upstream whose era
 * is to be found (`protocol: auto`) gets its probe sibling first, then its process once the sibling is gone.
 * Light: no SDK import.
 */
import type { ChildProcess } from "node:child_process";
import { isDeepStrictEqual } from "node:util";
import type { ProbeIdentity, ProbeVerdict } from "./probe.js";
import { probeStdio } from "./probe-stdio.js";
import { DEFAULT_KILL_GRACE_MS, endGroup, signalGroup } from "./process-group.js";
import { type SpawnSpec, spawnUpstream } from "./stdio-transport.js";

const waiting = new Map<string, { spec: SpawnSpec; child: ChildProcess }>();
const probes = new Map<string, { spec: SpawnSpec; verdict: Promise<ProbeVerdict>; stop: AbortController }>();
let stopped = false;

export function prespawn(name: string, spec: SpawnSpec): void {
  if (stopped || waiting.has(name)) return;
  const child = spawnUpstream(spec);
  // An unclaimed child that fails must not crash the proxy; its connection will report the failure.
  child.on("error", () => {});
  if (!waiting.size) process.once("exit", killUnadoptedNow);
  waiting.set(name, { spec, child });
}

/**
 * Probes the era of an upstream on a sibling now, then spawns its process (after the sibling is gone: never
 * both at once). Its connection adopts the verdict (adoptProbe), then the process (adopt).
 */
export function prespawnProbed(name: string, spec: SpawnSpec, who: ProbeIdentity, timeoutMs: number): void {
  if (stopped || waiting.has(name) || probes.has(name)) return;
  const stop = new AbortController();
  const verdict = probeStdio(spec, who, timeoutMs, stop.signal)
    .catch((err: Error): ProbeVerdict => ({ kind: "error", message: err.message }))
    .then((v) => {
      // A probe nobody adopts any more (its spec changed before the connection asked) spawns nothing.
      if (!stop.signal.aborted) prespawn(name, spec);
      return v;
    });
  probes.set(name, { spec, verdict, stop });
}

/** The verdict of the probe started early for this upstream with exactly this spec, if any (once). */
export function adoptProbe(name: string, spec: SpawnSpec): Promise<ProbeVerdict> | undefined {
  const entry = probes.get(name);
  if (!entry) return undefined;
  probes.delete(name);
  if (isDeepStrictEqual(entry.spec, spec)) return entry.verdict;
  entry.stop.abort();
  return undefined;
}

/**
 * The proxy exits before anything adopted them (a bad option, a config error found later, a crash while
 * loading): their process groups are killed at once. They never served, so there is nothing to let them finish.
 */
function killUnadoptedNow(): void {
  for (const { child } of waiting.values()) if (child.pid !== undefined) signalGroup(child.pid, "SIGKILL");
  waiting.clear();
}

/** The process started for this upstream with exactly this spec, if any (once). */
export function adopt(name: string, spec: SpawnSpec): ChildProcess | undefined {
  const entry = waiting.get(name);
  if (!entry) return undefined;
  waiting.delete(name);
  if (isDeepStrictEqual(entry.spec, spec) && entry.child.exitCode === null) return entry.child;
  void endGroup(entry.child, DEFAULT_KILL_GRACE_MS, false);
  return undefined;
}

/**
 * Stops every probe and process group nobody adopted (the config changed before they were used, or shutdown
 * came first): SIGTERM to the group at once (they never served), SIGKILL after the grace period. Nothing is
 * spawned early after this. Resolves when they are gone.
 */
export async function killUnadopted(): Promise<void> {
  stopped = true;
  const running = [...probes.values()];
  probes.clear();
  for (const p of running) p.stop.abort();
  await Promise.all(running.map((p) => p.verdict.catch(() => {})));
  const children = [...waiting.values()].map((w) => w.child);
  waiting.clear();
  await Promise.all(children.map((child) => endGroup(child, DEFAULT_KILL_GRACE_MS, false)));
}
