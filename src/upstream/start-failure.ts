/** @module Why an upstream instance did not start: the state to report, the line to log, and which stderr line says why. */
import type { UpstreamState } from "../catalog/inventory.js";
import type { Logger } from "../log.js";
import { AuthorizationRequiredError } from "./http-auth.js";
import { message } from "./util.js";

/** The reason of an instance that waits for a person to authorize it (its URL is in the state's authorizeUrl). */
const NEEDS_AUTHORIZATION = "authorization required";

/**
 * Lines a failing program writes that never say why: where a log is (npm), an error code before its message
 * (npm), a stack frame, the runtime's version, a source excerpt and its caret (Node), a traceback's header.
 */
const NOISE = [
  /\bA complete log of this run can be found in\b/i,
  /^npm (error|ERR!) (code|errno|syscall|path|dest|signal|command|cwd)\b/,
  /^npm (error|ERR!)\s*$/,
  /^npm (error|ERR!)\s+\/\S+$/,
  /^npm (notice|warn|WARN)\b/,
  /^\s+at\s/,
  /^\s*Node\.js v\d/,
  /^\s*\^+\s*$/,
  /^\s*throw\s+\w+;?\s*$/,
  /^node:internal\//,
  /^Traceback \(most recent call last\):/,
  /^\s*File ".*", line \d+/,
  /^\s*[{}[\],]\s*$/,
  /^\s+\w+: .*,$/,
];
/** A line that states a failure (`Error: …`, `… not found`, `npx canceled …`, `ModuleNotFoundError: …`). */
const TELLING =
  /\b(error|cannot|can't|could not|couldn't|unable|failed|failure|denied|refused|missing|not found|no such|not installed|invalid|canceled|cancelled|unauthori[sz]ed|forbidden|fatal|panic|exception|unknown|unsupported|requires?|timed out)\b|^\w*(Error|Exception)\b/i;

/**
 * The line of a failed program's stderr that says why it failed: the last line stating a failure that is not
 * boilerplate (npm's "A complete log of this run…" comes after the line that matters), else the last line that
 * is not boilerplate, else the last line.
 */
export function tellingLine(tail: readonly string[]): string | undefined {
  const lines = tail.map((l) => l.trimEnd()).filter((l) => l.trim() !== "");
  const said = lines.filter((l) => !NOISE.some((n) => n.test(l)));
  return said.findLast((l) => TELLING.test(l)) ?? said.at(-1) ?? lines.at(-1);
}

export function startFailure(
  err: unknown,
  stderrTail: readonly string[] | undefined,
  log: Logger,
  redact?: (text: string) => string,
): UpstreamState {
  if (err instanceof AuthorizationRequiredError) {
    // Not a fault: a person has to authorize. The URL (it holds a ticket) goes to its principal, not to logs.
    log.info("upstream needs authorization");
    return { status: "unavailable", reason: NEEDS_AUTHORIZATION, authorizeUrl: err.authorizeUrl };
  }
  const why = tellingLine(stderrTail ?? []);
  const reason = `${message(err)}${why ? ` (stderr: ${why})` : ""}`;
  log.warn("upstream failed to start", { reason: redact?.(reason) ?? reason });
  return { status: "unavailable", reason };
}

/** Why a running instance's lists could not be read again: as at start for an authorization required (its
 * ticketed URL stays out of the reason and the logs), else the error's message. */
export function refreshFailure(err: unknown, log: Logger): UpstreamState {
  if (err instanceof AuthorizationRequiredError) return startFailure(err, undefined, log);
  return { status: "unavailable", reason: message(err) };
}
