/**
 * @module Ended session ids, held locally: a bounded set of digests answering synchronously, and how far back it
 * remembers (the latest end it had to forget), so that an id pushed out by later ends is never taken for a live one.
 */
import { digest } from "./codec.js";

/** At most `max` digests with when each ended; the oldest is forgotten first. Holds digests, never ids. */
export class EndedSet {
  private readonly ends = new Map<string, number>();
  private forgotten: number | undefined;

  constructor(
    private readonly max: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Adds an id, ended now; returns its digest (what travels to other replicas). */
  addId(sessionId: string): string {
    const d = digest(sessionId);
    this.addDigest(d);
    return d;
  }

  /** `at`: when it ended (ms; default now). */
  addDigest(d: string, at = this.now()): void {
    if (this.ends.has(d)) return;
    this.ends.set(d, at);
    if (this.ends.size <= this.max) return;
    const [oldest, ended] = this.ends.entries().next().value as [string, number];
    this.ends.delete(oldest);
    this.forget(ended);
  }

  /** Ends up to `at` may be forgotten (another set, Redis, forgot them): ids issued by then are in doubt. */
  forget(at: number): void {
    if (this.forgotten === undefined || at > this.forgotten) this.forgotten = at;
  }

  has(sessionId: string): boolean {
    // Asked on every request: no digest to compute while nothing has ended.
    return this.ends.size > 0 && this.ends.has(digest(sessionId));
  }

  /** The latest end this set forgot (ms); undefined while it forgot none. */
  get forgottenUntil(): number | undefined {
    return this.forgotten;
  }

  get size(): number {
    return this.ends.size;
  }
}
