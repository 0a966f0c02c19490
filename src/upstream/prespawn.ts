/**
 * @module Upstream processes started before the proxy has finished loading: the default selection's stdio
 * upstreams boot on the other core while the SDK loads, and their connections adopt them (an upstream whose era
 * is to be found is asked on that process, once adopted: probe-stdio.ts). Light: no SDK import.
 */
import type { ChildProcess } from "node:child_process";
import { isDeepStrictEqual } from "node:util";
import { DEFAULT_KILL_GRACE_MS, endGroup, signalGroup } from "./process-group.js";
import { type SpawnSpec, spawnUpstream } from "./stdio-transport.js";

const waiting = new Map<string, { spec: SpawnSpec; child: ChildProcess }>();
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
  // A process whose spawn failed (no pid) or that has exited is not adopted: a fresh spawn reports why.
  const alive =
    entry.child.pid !== undefined && entry.child.exitCode === null && entry.child.signalCode === null;
  if (isDeepStrictEqual(entry.spec, spec) && alive) return entry.child;
  void endGroup(entry.child, DEFAULT_KILL_GRACE_MS, false);
  return undefined;
}

/**
 * Stops every process group nobody adopted (the config changed before they were used, or shutdown
 * came first): SIGTERM to the group at once (they never served), SIGKILL after the grace period. Nothing is
 * spawned early after this. Resolves when they are gone.
 */
export async function killUnadopted(): Promise<void> {
  stopped = true;
  const children = [...waiting.values()].map((w) => w.child);
  waiting.clear();
  await Promise.all(children.map((child) => endGroup(child, DEFAULT_KILL_GRACE_MS, false)));
}
