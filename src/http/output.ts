/** @module The output bounds of one response (SPEC §7.6) as the door states them, for the HTTP transports. */
import type { Front } from "../door/front.js";
import type { OutputEvents, OutputLimits } from "./output-guard.js";

export interface OutputBounds {
  readonly output: OutputLimits;
  readonly outputEvents: OutputEvents;
}

/** The bounds of a session's (or a 2026-07-28 request's) responses; `digest` names it in logs. */
export function outputOf(
  front: Pick<Front, "limits" | "limitReached">,
  digest: string | undefined,
): OutputBounds {
  const limits = front.limits();
  return {
    output: { pendingBytes: limits.pendingOutputBytes, stalledMs: limits.stalledReaderMs },
    outputEvents: {
      dropping: (pending) =>
        front.limitReached(
          "pending_output_bytes",
          "a client reads its response too slowly: notifications on it are dropped, progress keeps only the latest (limits.pending_output_bytes)",
          { session: digest, pending_bytes: pending },
        ),
      stalled: (pending, dropped) =>
        front.limitReached(
          "stalled_reader_timeout",
          "a client read nothing of its response for limits.stalled_reader_timeout: connection closed",
          { session: digest, pending_bytes: pending, dropped },
        ),
    },
  };
}
