/**
 * @module The era probe of a stdio upstream, on its own process: `server/discover` is the first message the
 * process gets. A 2026-07-28 server answers it and is spoken to on that process; a 2025 server that answers it
 * with an error (SDK v1 and v2, Python: -32601 or -32602) stays up and is initialized on that process; one that
 * exits on it (rmcp does) or stays silent is replaced by a fresh process (the caller's part), the old one ended
 * first, so two copies never run at once. Light: no SDK import.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  discoverMessage,
  type ProbeIdentity,
  type ProbeOutcome,
  type ProbeVerdict,
  probeAnswer,
  probeWith,
} from "./probe.js";

export interface InPlaceProbe {
  readonly verdict: ProbeVerdict;
  /**
   * The process answered and is still up: the channel of the verdict's era opens on it. Otherwise (it exited,
   * closed its output, or stayed silent) it must be ended and a fresh one spawned.
   */
  readonly reusable: boolean;
}

/**
 * Starts `transport`, asks it `server/discover` (following one -32022 correction), and says what the answer means.
 *  A timeout, an exit or a closed pipe is legacy (silence on a local pipe is a 2025 server); a process that cannot
 * be started throws, as it would unprobed. `signal` ends the wait early (shutdown): the verdict is then an error. The transport's
 * handlers are left as they were found, for the channel that takes it over.
 */
export async function probeInPlace(
  transport: Transport,
  who: ProbeIdentity,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<InPlaceProbe> {
  const saved = { onmessage: transport.onmessage, onclose: transport.onclose, onerror: transport.onerror };
  let waiting: ((outcome: ProbeOutcome) => void) | undefined;
  let ended: ProbeOutcome | undefined;
  let last = "closed" as ProbeOutcome["kind"];
  const settle = (outcome: ProbeOutcome) => {
    ended ??= outcome;
    const w = waiting;
    waiting = undefined;
    w?.(outcome);
  };
  transport.onmessage = (message) => {
    const answer = probeAnswer(message);
    if (answer) waiting?.(answer);
  };
  transport.onclose = () => settle({ kind: "closed" });
  transport.onerror = () => {};
  const abort = () => settle({ kind: "closed" });
  signal?.addEventListener("abort", abort, { once: true });
  try {
    await transport.start();
    const verdict = await probeWith((version) => {
      if (ended) return Promise.resolve(ended);
      return new Promise<ProbeOutcome>((resolve) => {
        const timer = setTimeout(() => settle({ kind: "timeout", ms: timeoutMs }), timeoutMs);
        waiting = (outcome) => {
          clearTimeout(timer);
          last = outcome.kind;
          resolve(outcome);
        };
        transport.send(discoverMessage(version, who) as never).catch(() => settle({ kind: "closed" }));
      });
    }, "stdio");
    if (signal?.aborted) {
      return { verdict: { kind: "error", message: "closed while probing", aborted: true }, reusable: false };
    }
    const answered = last === "result" || last === "rpc-error";
    return { verdict, reusable: answered && ended === undefined };
  } finally {
    signal?.removeEventListener("abort", abort);
    Object.assign(transport, saved);
  }
}
