/** @module One piece of work per key at a time, its answer kept for a while: concurrent askers share one request. */

/** Concurrent `run`s of one key share one promise; a fulfilled one is kept `ttlMs` (0: not kept), a failure never. */
export class SingleFlight<T> {
  readonly #entries = new Map<string, { value: Promise<T>; until: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    /** Keys kept at most; the oldest goes first. */
    private readonly max = 1_000,
  ) {}

  /** `fresh`: a kept answer is not used (one in flight still is), and the new one is kept in its place. */
  run(key: string, work: () => Promise<T>, fresh = false): Promise<T> {
    const hit = this.#entries.get(key);
    if (hit && hit.until > this.now() && (!fresh || hit.until === Number.POSITIVE_INFINITY)) return hit.value;
    const value = work();
    // In flight until it settles: shared, however long it takes.
    this.#entries.set(key, { value, until: Number.POSITIVE_INFINITY });
    value.then(
      () => {
        if (this.#entries.get(key)?.value !== value) return;
        if (this.ttlMs > 0) this.#entries.set(key, { value, until: this.now() + this.ttlMs });
        else this.#entries.delete(key);
      },
      () => {
        if (this.#entries.get(key)?.value === value) this.#entries.delete(key);
      },
    );
    while (this.#entries.size > this.max) this.#entries.delete(this.#entries.keys().next().value!);
    return value;
  }

  forget(key: string): void {
    this.#entries.delete(key);
  }
}
