/**
 * @module Ending a stdio upstream's whole process group: it is started as a group leader (`detached`), so a
 * launcher that does not forward signals (a shell, npx, uvx) cannot leave its server behind. Light: no SDK import.
 */
import type { ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/**
 * How long each step (stdin closed, then SIGTERM) is given before the next. Half the SDK client's 2 s: a
 * proxy closed by such a client (stdin, 2 s, SIGTERM, 2 s, SIGKILL) must end its own upstreams before it is killed.
 */
export const DEFAULT_KILL_GRACE_MS = 1000;

/** Sends `signal` to every process of the group led by `pgid`; false if there is none. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether a live member of the group is left. A member that has exited but was not reaped yet (a zombie: the
 * init of a container may never reap orphans) still receives signal 0, so on Linux the states are read.
 */
export function groupAlive(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  if (process.platform !== "linux") return true;
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return true;
  }
  for (const name of names) {
    if (name.charCodeAt(0) > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue;
    }
    // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so read after the last ')'.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(pgrp) === pgid && state !== "Z" && state !== "X") return true;
  }
  return false;
}

/** Resolves true once the group has no live member, false after `ms`. */
async function groupGone(pgid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  for (let delay = 10; ; delay = Math.min(delay * 2, 100)) {
    if (!groupAlive(pgid)) return true;
    if (Date.now() >= until) return false;
    await new Promise((r) => setTimeout(r, Math.min(delay, Math.max(1, until - Date.now()))));
  }
}

/**
 * Ends a child's group: stdin closed (with `endInput`), then SIGTERM to the group after `graceMs`, then SIGKILL
 * to the group after `graceMs` more. Resolves when no member is left (or SIGKILL was sent and had its moment).
 */
export async function endGroup(child: ChildProcess, graceMs: number, endInput = true): Promise<void> {
  const pgid = child.pid;
  if (pgid === undefined) return;
  if (endInput) {
    try {
      child.stdin?.end();
    } catch {}
    if (await groupGone(pgid, graceMs)) return;
  }
  // A child that leads no group (spawned elsewhere) is signalled alone.
  const signal = (s: NodeJS.Signals) => signalGroup(pgid, s) || (child.exitCode === null && child.kill(s));
  if (signal("SIGTERM") && (await groupGone(pgid, graceMs))) return;
  if (signal("SIGKILL")) await groupGone(pgid, 1000);
}
