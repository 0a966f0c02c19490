/**
 * @module What a call leaves behind (a tool call, a prompts/get, a resources/read, refused or not): its metrics,
 * its log line and its audit line (who, never a token or session id). The one place they are written.
 */

import type { AuditEntry, AuditMethod, Refusal } from "../audit.js";
import type { Outcome } from "../metrics.js";
import { ErrorCode } from "../protocol.js";
import type { Route } from "../resolve.js";
import type { Signal } from "../wire/signal.js";
import type { Call, SessionState } from "./state.js";

/** How a call that threw ended: cancelled by the client, timed out upstream, or failed. */
export function outcomeOf(err: unknown, signal: Signal): Outcome {
  if (signal.aborted) return "cancelled";
  return (err as { code?: number }).code === ErrorCode.RequestTimeout ? "timeout" : "error";
}

/** How an observed call ended: as it ran (§8.2), or refused before anything ran, and why. */
export type Ending =
  | { readonly outcome: Outcome }
  | { readonly outcome: "refused"; readonly reason: Refusal };

export interface Observed {
  readonly method: AuditMethod;
  /** What the client named: a tool's or a prompt's name, or a resource's URI (as sent). */
  readonly name: unknown;
  /** The upstream member it was routed to, when it was (a built-in or an unknown name has none). */
  readonly route?: Route | undefined;
  /** The toolset it counts under, when one has it. */
  readonly toolset?: string | undefined;
  readonly ending: Ending;
  /** `performance.now()` when the call began. */
  readonly started: number;
  /** The arguments as the client sent them: written only with `audit.arguments: true`. */
  readonly args?: unknown;
}

/** A name the client chose, as logs write it: bounded (it is the client's to make long). */
function named(name: unknown): string | null {
  if (typeof name !== "string") return null;
  return name.length > MAX_NAME ? `${name.slice(0, MAX_NAME)}…` : name;
}
const MAX_NAME = 256;

const NAME_KEY: Record<AuditMethod, "tool" | "prompt" | "uri"> = {
  "tools/call": "tool",
  "prompts/get": "prompt",
  "resources/read": "uri",
};

export function observe(
  s: Pick<SessionState, "host" | "digest" | "principal" | "selection">,
  call: Pick<Call, "requestId">,
  o: Observed,
): void {
  const { host } = s;
  const seconds = (performance.now() - o.started) / 1000;
  const audit = host.audit;
  const subject = audit ? audit.subjectOf(s.principal) : s.principal?.subject;
  const { route, ending } = o;
  const toolset = o.toolset ?? null;
  // Metrics count the calls that reached an upstream tool (their labels are the config's names, never the client's).
  if (o.method === "tools/call" && route && ending.outcome !== "refused")
    host.metrics.recordCall(
      toolset ?? "",
      route.name,
      route.upstream,
      ending.outcome,
      seconds,
      subject,
      route,
    );
  // A line per call: its fields are built only when a debug line or an audit line is written (by default neither).
  const debug = host.logger.enabled?.("debug") ?? true;
  if (!debug && !audit) return;
  const ms = Math.round(seconds * 10_000) / 10;
  const name = { [NAME_KEY[o.method]]: named(o.name) };
  const reason = ending.outcome === "refused" ? { reason: ending.reason } : {};
  if (debug)
    host.logger.debug("call", {
      request_id: call.requestId,
      session: s.digest,
      ...(subject !== undefined ? { subject } : {}),
      method: o.method,
      ...name,
      ...(route ? { upstream: route.upstream } : {}),
      outcome: ending.outcome,
      ...reason,
      ms,
    });
  if (!audit) return;
  const entry: AuditEntry = {
    subject: subject ?? null,
    selection: s.selection.key,
    toolset,
    method: o.method,
    ...name,
    upstream: route?.upstream ?? null,
    outcome: ending.outcome,
    ...reason,
    duration_ms: ms,
    session: s.digest,
    ...(call.requestId ? { request_id: call.requestId } : {}),
    // A resource read has no arguments.
    ...(audit.withArguments && o.method !== "resources/read" ? { arguments: o.args ?? {} } : {}),
  };
  audit.record(entry);
}
