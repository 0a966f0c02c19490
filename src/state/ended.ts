/** @module Ended session ids, held locally: a bounded set of digests answering synchronously. */
import { digest } from "./codec.js";

/** At most `max` digests; the oldest is forgotten first. Holds digests, never ids. */
export class EndedSet {
  private readonly digests = new Set<string>();

  constructor(private readonly max: number) {}

  /** Adds an id; returns its digest (what travels to other replicas). */
  addId(sessionId: string): string {
    const d = digest(sessionId);
    this.addDigest(d);
    return d;
  }

  addDigest(d: string): void {
    if (this.digests.has(d)) return;
    this.digests.add(d);
    if (this.digests.size > this.max) this.digests.delete(this.digests.values().next().value as string);
  }

  has(sessionId: string): boolean {
    // Asked on every request: no digest to compute while nothing has ended.
    return this.digests.size > 0 && this.digests.has(digest(sessionId));
  }

  get size(): number {
    return this.digests.size;
  }
}
