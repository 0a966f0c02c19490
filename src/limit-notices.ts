/** @module Saying that a limit of SPEC §7.6 was reached, without a flood of log lines: for every layer that has one. */

/** Says a limit was reached at warn once a minute per limit, and at debug in between: a flood is not a log flood. */
export class LimitNotices {
  private readonly last = new Map<string, number>();

  constructor(
    private readonly logger: {
      warn(msg: string, fields?: Record<string, unknown>): void;
      debug(msg: string, fields?: Record<string, unknown>): void;
    },
    private readonly now: () => number = Date.now,
  ) {}

  say(limit: string, msg: string, fields: Record<string, unknown> = {}): void {
    const t = this.now();
    const loud = t - (this.last.get(limit) ?? Number.NEGATIVE_INFINITY) >= 60_000;
    if (loud) this.last.set(limit, t);
    this.logger[loud ? "warn" : "debug"](msg, { limit, ...fields });
  }
}
