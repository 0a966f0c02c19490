/**
 * @module The era probe of a stdio upstream, on a sibling process: some servers exit on any request before
 * `initialize` (rmcp does), so the upstream's own process never sees `server/discover`. The sibling is spawned
 * from the same spawn spec (its stderr discarded), asked, and ended (its whole process group) before the verdict
 * is given, so it never runs beside the real process. Light: no SDK import.
 */
import { spawn } from "node:child_process";
import { LineReader } from "./lines.js";
import {
  discoverMessage,
  type ProbeIdentity,
  type ProbeOutcome,
  type ProbeVerdict,
  probeAnswer,
  probeWith,
} from "./probe.js";
import { DEFAULT_KILL_GRACE_MS, endGroup } from "./process-group.js";
import type { SpawnSpec } from "./stdio-transport.js";

/** The longest answer line read from a probe (a DiscoverResult is small). */
const PROBE_LINE_BYTES = 4 * 1024 * 1024;

/**
 * Spawns a sibling from `spec`, asks it `server/discover`, ends it, and says what its answer means. A timeout, an
 * exit or a closed pipe is legacy (silence on a local pipe is a 2025 server); a command that cannot be started is
 * an error. `signal` ends the sibling early (shutdown): the verdict is then an error.
 */
export async function probeStdio(
  spec: SpawnSpec,
  who: ProbeIdentity,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<ProbeVerdict> {
  const child = spawn(spec.command, [...spec.args], {
    env: spec.env,
    cwd: spec.cwd,
    stdio: ["pipe", "pipe", "ignore"],
    windowsHide: true,
    detached: true,
  });
  let waiting: ((outcome: ProbeOutcome) => void) | undefined;
  let ended: ProbeOutcome | undefined;
  const settle = (outcome: ProbeOutcome) => {
    ended ??= outcome;
    const w = waiting;
    waiting = undefined;
    w?.(outcome);
  };
  let failure: string | undefined;
  child.once("error", (err) => {
    failure = err.message;
    settle({ kind: "closed" });
  });
  child.once("exit", () => settle({ kind: "closed" }));
  child.stdin.on("error", () => {});
  const lines = new LineReader(
    PROBE_LINE_BYTES,
    (line) => {
      let answer: ProbeOutcome | undefined;
      try {
        answer = probeAnswer(JSON.parse(line.toString("utf8")));
      } catch {}
      if (answer) waiting?.(answer);
    },
    () => settle({ kind: "closed" }),
  );
  child.stdout.on("data", (chunk: Buffer) => lines.push(chunk));
  child.stdout.once("close", () => settle({ kind: "closed" }));
  const abort = () => settle({ kind: "closed" });
  signal?.addEventListener("abort", abort, { once: true });
  try {
    const verdict = await probeWith((version) => {
      if (ended) return Promise.resolve(ended);
      return new Promise<ProbeOutcome>((resolve) => {
        const timer = setTimeout(() => settle({ kind: "timeout", ms: timeoutMs }), timeoutMs);
        waiting = (outcome) => {
          clearTimeout(timer);
          resolve(outcome);
        };
        child.stdin.write(`${JSON.stringify(discoverMessage(version, who))}\n`);
      });
    }, "stdio");
    if (failure) return { kind: "error", message: `cannot start ${spec.command}: ${failure}` };
    if (signal?.aborted) return { kind: "error", message: "closed while probing" };
    return verdict;
  } finally {
    signal?.removeEventListener("abort", abort);
    await endGroup(child, DEFAULT_KILL_GRACE_MS);
  }
}
