/**
 * @module Saying that an upstream OAuth grant changed (SPEC §11.7): one log line (warn for a shared grant, which
 * every user's calls run in; info for a principal's own) and one audit line. Subjects as the audit settings say.
 */
import type { AuditLog } from "../audit.js";
import type { Logger } from "../log.js";
import type { GrantChange } from "../oauth/types.js";

/** `static:alice` → alice: the subject within its namespace, as logs write subjects. */
const subjectOf = (identity: string) => identity.slice(identity.indexOf(":") + 1);

export function grantReporter(logger: Logger, audit: () => AuditLog | undefined): (c: GrantChange) => void {
  return (c) => {
    const log = audit();
    const name = (identity: string) => log?.named(subjectOf(identity)) ?? subjectOf(identity);
    const subject = c.mode === "shared" ? null : name(c.principal);
    const by = c.via === "login" ? "toolpacks login" : c.by !== undefined ? name(c.by) : null;
    const shared = c.mode === "shared";
    const what = c.action === "authorized" ? (shared ? "replaced" : "stored") : "dropped";
    logger[shared ? "warn" : "info"](
      `oauth: ${shared ? "the shared grant" : "a grant"} of upstream ${c.upstream} was ${what}`,
      {
        upstream: c.upstream,
        ...(subject !== null ? { subject } : {}),
        ...(by !== null ? { by } : {}),
        via: c.via,
        ...(c.reason ? { reason: c.reason } : {}),
      },
    );
    log?.record({
      event: "oauth_grant",
      upstream: c.upstream,
      mode: c.mode,
      action: c.action,
      subject,
      by,
      via: c.via,
      ...(c.reason ? { reason: c.reason } : {}),
    });
  };
}
