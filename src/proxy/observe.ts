/** @module What a tool call leaves behind: its metrics and its log line. */
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import type { Outcome } from "../metrics.js";
import type { Route } from "../resolve.js";
import { type Extra, requestIdOf } from "./extra.js";
import type { Gateway } from "./gateway.js";

/** How a call that threw ended: cancelled by the client, timed out upstream, or failed. */
export function outcomeOf(err: unknown, signal: AbortSignal): Outcome {
  if (signal.aborted) return "cancelled";
  return (err as { code?: number }).code === ErrorCode.RequestTimeout ? "timeout" : "error";
}

export function observeCall(
  gateway: Gateway,
  route: Route,
  extra: Extra,
  outcome: Outcome,
  started: number,
): void {
  const seconds = (performance.now() - started) / 1000;
  gateway.metrics.recordCall(route.toolsets[0] ?? "", route.name, route.upstream, outcome, seconds);
  gateway.logger.debug("call", {
    request_id: requestIdOf(extra),
    session: extra.sessionId,
    tool: route.name,
    upstream: route.upstream,
    outcome,
    ms: Math.round(seconds * 10_000) / 10,
  });
}
