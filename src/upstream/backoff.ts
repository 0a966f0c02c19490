/** @module Restart backoff of a failed upstream: immediate once, then doubling, capped; reset after a stable period. */

export const BACKOFF_BASE_MS = 1_000;
export const BACKOFF_CAP_MS = 30_000;
/** Up this long, an upstream's failure count starts again from zero. */
export const STABLE_MS = 60_000;

/** Delay before the restart that follows the `failures`-th consecutive failure. */
export function backoffDelay(failures: number): number {
  if (failures <= 1) return 0;
  return Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.min(failures - 2, 16));
}
