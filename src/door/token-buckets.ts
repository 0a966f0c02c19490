/** @module Token buckets per key (a client): at most `perMinute` takes a minute, refilled continuously, in bounded memory. */

interface Bucket {
  tokens: number;
  at: number;
}

export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly now: () => number = Date.now,
    /** Keys remembered at most; past it the least recently used are forgotten (their buckets refill). */
    private readonly maxKeys = 10_000,
  ) {}

  get size(): number {
    return this.buckets.size;
  }

  private bucket(key: string, perMinute: number): Bucket {
    const now = this.now();
    const b = this.buckets.get(key) ?? { tokens: perMinute, at: now };
    b.tokens = Math.min(perMinute, b.tokens + ((now - b.at) * perMinute) / 60_000);
    b.at = now;
    // Most recently used last: the first key is the one to forget.
    this.buckets.delete(key);
    this.buckets.set(key, b);
    if (this.buckets.size > this.maxKeys) this.buckets.delete(this.buckets.keys().next().value as string);
    return b;
  }

  /**
   * Takes `n` tokens (at most a full bucket's worth, so a request bigger than the bucket is not refused forever).
   * Returns 0 when taken, else the milliseconds until they would be there (nothing is taken then).
   */
  take(key: string, n: number, perMinute: number): number {
    const b = this.bucket(key, perMinute);
    const want = Math.min(n, perMinute);
    if (b.tokens >= want) {
      b.tokens -= want;
      return 0;
    }
    return Math.ceil(((want - b.tokens) * 60_000) / perMinute);
  }

  /** Gives back tokens taken for something that did not happen. */
  refund(key: string, n: number, perMinute: number): void {
    const b = this.bucket(key, perMinute);
    b.tokens = Math.min(perMinute, b.tokens + Math.min(n, perMinute));
  }
}
