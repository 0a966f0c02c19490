/** @module What a tool call leaves behind: its metrics, its log line and its audit line (who, never a token or session id). */
import type { Outcome } from "../metrics.js";
import { ErrorCode } from "../protocol.js";
import type { Route } from "../resolve.js";
import type { Call, SessionState } from "./state.js";

/** How a call that threw ended: cancelled by the client, timed out upstream, or failed. */
export function outcomeOf(err: unknown, signal: AbortSignal): Outcome {
  if (signal.aborted) return "cancelled";
  return (err as { code?: number }).code === ErrorCode.RequestTimeout ? "timeout" : "error";
}

export function observeCall(
  s: Pick<SessionState, "host" | "digest" | "principal" | "selection">,
  route: Route,
  call: Call,
  outcome: Outcome,
  started: number,
  args?: unknown,
): void {
  const { host } = s;
  const seconds = (performance.now() - started) / 1000;
  const audit = host.audit;
  const subject = audit ? audit.subjectOf(s.principal) : s.principal?.subject;
  const toolset = route.toolsets[0] ?? "";
  host.metrics.recordCall(toolset, route.name, route.upstream, outcome, seconds, subject);
  const ms = Math.round(seconds * 10_000) / 10;
  host.logger.debug("call", {
    request_id: call.requestId,
    session: s.digest,
    ...(subject !== undefined ? { subject } : {}),
    tool: route.name,
    upstream: route.upstream,
    outcome,
    ms,
  });
  audit?.record({
    subject: subject ?? null,
    selection: s.selection.key,
    toolset,
    tool: route.name,
    upstream: route.upstream,
    outcome,
    duration_ms: ms,
    session: s.digest,
    ...(call.requestId ? { request_id: call.requestId } : {}),
    ...(audit.withArguments ? { arguments: args ?? {} } : {}),
  });
}
