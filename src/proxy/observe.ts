/** @module What a tool call leaves behind: its metrics and its log line (a session digest, never its id). */

import type { Logger } from "../log.js";
import type { Outcome } from "../metrics.js";
import { ErrorCode } from "../protocol.js";
import type { Route } from "../resolve.js";
import type { CallFigures } from "./host.js";
import type { Call } from "./state.js";

/** How a call that threw ended: cancelled by the client, timed out upstream, or failed. */
export function outcomeOf(err: unknown, signal: AbortSignal): Outcome {
  if (signal.aborted) return "cancelled";
  return (err as { code?: number }).code === ErrorCode.RequestTimeout ? "timeout" : "error";
}

export function observeCall(
  host: { readonly metrics: CallFigures; readonly logger: Logger },
  route: Route,
  call: Call,
  outcome: Outcome,
  started: number,
  session: string,
): void {
  const seconds = (performance.now() - started) / 1000;
  host.metrics.recordCall(route.toolsets[0] ?? "", route.name, route.upstream, outcome, seconds);
  host.logger.debug("call", {
    request_id: call.requestId,
    session,
    tool: route.name,
    upstream: route.upstream,
    outcome,
    ms: Math.round(seconds * 10_000) / 10,
  });
}
