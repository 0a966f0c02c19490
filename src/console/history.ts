/**
 * @module Calls per toolset and minute, for the console's live panel. Kept from what the counters say when the
 * page asks (at most one sample per 5 s, none older than the window): with nobody looking, nothing is sampled
 * and nothing runs, so a minute nobody watched is unknown (null), never a guess.
 */

/** Calls since start: toolset → [ok, errors]. */
export type Totals = ReadonlyMap<string, readonly [number, number]>;

export const WINDOW_MINUTES = 10;
const MINUTE = 60_000;
const MIN_GAP_MS = 5_000;

interface Sample {
  readonly at: number;
  readonly totals: Totals;
}

export class CallHistory {
  private samples: Sample[] = [];

  /** Keeps `totals` as of `now` (unless the last sample is under 5 s old), and drops what fell out of the window. */
  record(now: number, totals: Totals): void {
    const last = this.samples.at(-1);
    if (last && now < last.at) this.samples = []; // the clock went back: what was kept no longer lines up
    if (last && now >= last.at && now - last.at < MIN_GAP_MS) return;
    this.samples.push({ at: now, totals });
    // One sample older than the window stays: the first minute's count starts from it.
    const start = now - WINDOW_MINUTES * MINUTE;
    while (this.samples.length > 1 && this.samples[1]!.at <= start) this.samples.shift();
  }

  /**
   * Per minute for one toolset, oldest first, ending with the minute that ends now: the difference of the counts
   * at the minute's two ends, null when no sample was taken at or before its start (the page was not open).
   */
  minutes(now: number, toolset: string): ({ ok: number; errors: number } | null)[] {
    const out: ({ ok: number; errors: number } | null)[] = [];
    for (let i = WINDOW_MINUTES - 1; i >= 0; i--) {
      const end = this.at(now - i * MINUTE);
      const begin = this.at(now - (i + 1) * MINUTE);
      if (!end || !begin) {
        out.push(null);
        continue;
      }
      const [okEnd, errEnd] = end.totals.get(toolset) ?? [0, 0];
      const [okBegin, errBegin] = begin.totals.get(toolset) ?? [0, 0];
      out.push({ ok: Math.max(0, okEnd - okBegin), errors: Math.max(0, errEnd - errBegin) });
    }
    return out;
  }

  /** The latest sample taken at or before `t`. */
  private at(t: number): Sample | undefined {
    let found: Sample | undefined;
    for (const s of this.samples) {
      if (s.at > t) break;
      found = s;
    }
    return found;
  }
}
