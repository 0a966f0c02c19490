/** @module Why an upstream instance did not start: the state to report, and the line to log. */
import type { UpstreamState } from "../catalog/inventory.js";
import type { Logger } from "../log.js";
import { AuthorizationRequiredError } from "./http-auth.js";
import { message } from "./util.js";

/** The reason of an instance that waits for a person to authorize it (its URL is in the state's authorizeUrl). */
export const NEEDS_AUTHORIZATION = "authorization required";

export function startFailure(
  err: unknown,
  stderrTail: string | undefined,
  log: Logger,
  redact?: (text: string) => string,
): UpstreamState {
  if (err instanceof AuthorizationRequiredError) {
    // Not a fault: a person has to authorize. The URL (it holds a ticket) goes to its principal, not to logs.
    log.info("upstream needs authorization");
    return { status: "unavailable", reason: NEEDS_AUTHORIZATION, authorizeUrl: err.authorizeUrl };
  }
  const reason = `${message(err)}${stderrTail ? ` (stderr: ${stderrTail})` : ""}`;
  log.warn("upstream failed to start", { reason: redact?.(reason) ?? reason });
  return { status: "unavailable", reason };
}

/** Why a running instance's lists could not be read again: as at start for an authorization required (its
 * ticketed URL stays out of the reason and the logs), else the error's message. */
export function refreshFailure(err: unknown, log: Logger): UpstreamState {
  if (err instanceof AuthorizationRequiredError) return startFailure(err, undefined, log);
  return { status: "unavailable", reason: message(err) };
}
