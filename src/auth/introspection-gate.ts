/**
 * @module What bounds introspection (SPEC §7.6 "introspections"): a token bucket of requests, a bound on how many
 * are in flight, and refusals remembered briefly by a digest of the token. A flood of made-up opaque tokens costs
 * the authorization server at most the bucket's rate; the same refused token costs it one request a while.
 */

export interface IntrospectionLimits {
  /** Requests in flight at most; more wait their turn. */
  readonly concurrent: number;
  /** Requests a second on average, and at most `burst` at once (a token bucket). */
  readonly perSecond: number;
  readonly burst: number;
  /** How long a token's refusal is remembered. */
  readonly refusalTtlMs: number;
  /** Refusals remembered at most; the oldest goes first. */
  readonly refusalsKept: number;
}

export const INTROSPECTION_LIMITS: IntrospectionLimits = {
  concurrent: 4,
  perSecond: 20,
  burst: 20,
  refusalTtlMs: 30_000,
  refusalsKept: 10_000,
};

export class IntrospectionGate {
  #tokens: number;
  #at: number;
  #running = 0;
  readonly #waiting: (() => void)[] = [];
  readonly #refused = new Map<string, { description: string; until: number }>();

  constructor(
    private readonly now: () => number,
    readonly limits: IntrospectionLimits = INTROSPECTION_LIMITS,
  ) {
    this.#tokens = limits.burst;
    this.#at = now();
  }

  /** Takes one request from the bucket; false when none is left (the caller answers 503, Retry-After). */
  take(): boolean {
    const t = this.now();
    this.#tokens = Math.min(
      this.limits.burst,
      this.#tokens + ((t - this.#at) / 1000) * this.limits.perSecond,
    );
    this.#at = t;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  /** Whole seconds until the bucket has a request again. */
  get retryAfter(): number {
    return Math.max(1, Math.ceil((1 - this.#tokens) / this.limits.perSecond));
  }

  /** Runs `fn` once fewer than `concurrent` requests are in flight. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#running >= this.limits.concurrent) await new Promise<void>((go) => this.#waiting.push(go));
    this.#running++;
    try {
      return await fn();
    } finally {
      this.#running--;
      this.#waiting.shift()?.();
    }
  }

  /** Why the token of this digest was refused, while that is remembered. */
  refusal(digest: string): string | undefined {
    const hit = this.#refused.get(digest);
    if (!hit) return undefined;
    if (hit.until > this.now()) return hit.description;
    this.#refused.delete(digest);
    return undefined;
  }

  refused(digest: string, description: string): void {
    this.#refused.delete(digest);
    this.#refused.set(digest, { description, until: this.now() + this.limits.refusalTtlMs });
    while (this.#refused.size > this.limits.refusalsKept)
      this.#refused.delete(this.#refused.keys().next().value!);
  }
}
