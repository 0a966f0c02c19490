/**
 * @module File-descriptor headroom: new sessions, contexts and listen streams are refused (503) while the process
 * is near its open-file limit, so what already runs (answers, upstream connections, the accept loop) keeps the
 * descriptors it needs instead of everyone failing with EMFILE at once. Node has no getrlimit: on Linux the soft
 * limit is read once from /proc/self/limits and open descriptors are counted in /proc/self/fd, at most once per
 * sampling interval; where /proc is absent there is no check.
 */
import { readdirSync, readFileSync } from "node:fs";

/** What the check reads: the open descriptors now, and the soft limit (undefined: unknown, no check). */
export interface FdGauge {
  open(): number | undefined;
  readonly limit: number | undefined;
  /** Counting costs a directory read: `open` is called at most once per this many ms (default 100). */
  readonly everyMs?: number;
}

/** The soft "Max open files" of this process, from /proc/self/limits; undefined when unreadable or unlimited. */
export function softFdLimit(
  read: () => string = () => readFileSync("/proc/self/limits", "utf8"),
): number | undefined {
  try {
    const line = read()
      .split("\n")
      .find((l) => l.startsWith("Max open files"));
    const soft = line?.slice("Max open files".length).trim().split(/\s+/)[0];
    const n = Number(soft);
    return Number.isSafeInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/** This process's gauge: /proc on Linux, nothing elsewhere. */
export function procFdGauge(
  limit = softFdLimit(),
  count: () => number = () => readdirSync("/proc/self/fd").length,
): FdGauge {
  return {
    limit,
    open: () => {
      if (limit === undefined) return undefined;
      try {
        return count();
      } catch (err) {
        // Counting needs a descriptor of its own: failing for want of one is the limit reached, not "no check".
        const code = (err as NodeJS.ErrnoException).code;
        return code === "EMFILE" || code === "ENFILE" ? limit : undefined;
      }
    },
  };
}

/** Descriptors kept free: 5 % of the limit, at least 64 (and never more than half of a small limit). */
export function headroomOf(limit: number): number {
  return Math.min(Math.max(64, Math.ceil(limit * 0.05)), Math.floor(limit / 2));
}

export class FdHeadroom {
  private sampledAt = Number.NEGATIVE_INFINITY;
  private openNow: number | undefined;

  constructor(
    private readonly gauge: FdGauge,
    private readonly now: () => number,
  ) {}

  /** Free descriptors are fewer than the headroom: `{open, limit}` then, else undefined. */
  low(): { open: number; limit: number } | undefined {
    const limit = this.gauge.limit;
    if (limit === undefined) return undefined;
    const t = this.now();
    if (t - this.sampledAt >= (this.gauge.everyMs ?? 100)) {
      this.openNow = this.gauge.open();
      this.sampledAt = t;
    }
    const open = this.openNow;
    if (open === undefined || limit - open >= headroomOf(limit)) return undefined;
    return { open, limit };
  }
}
