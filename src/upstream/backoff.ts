/** @module Restart backoff of a failed upstream: immediate once, then doubling, capped; reset after a stable period. */

const BACKOFF_BASE_MS = 1_000;
export const BACKOFF_CAP_MS = 30_000;
/** Up this long, an upstream's failure count starts again from zero. */
const STABLE_MS = 60_000;

/** Delay before the restart that follows the `failures`-th consecutive failure. */
export function backoffDelay(failures: number): number {
  if (failures <= 1) return 0;
  return Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.min(failures - 2, 16));
}

/** One instance's failure count and when it may restart: counts reset once it has been up STABLE_MS. */
export class Restarts {
  private failures = 0;
  private retryAt = 0;
  private upSince = 0;

  /** True when this start comes after a failure (a restart, for the metrics). */
  get afterFailure(): boolean {
    return this.failures > 0;
  }

  /** Counts a failure (start failed, or the upstream went away) and sets when a restart is allowed. */
  failed(now: number): void {
    if (this.upSince && now - this.upSince >= STABLE_MS) this.failures = 0;
    this.upSince = 0;
    this.failures++;
    this.retryAt = now + backoffDelay(this.failures);
  }

  /** Credentials changed (a new authorization): the next start may happen at once. */
  reset(): void {
    this.failures = 0;
    this.retryAt = 0;
  }

  up(now: number): void {
    this.upSince = now;
  }

  /** Milliseconds until a restart is allowed (0 or less: now). */
  waitMs(now: number): number {
    return this.retryAt - now;
  }
}
