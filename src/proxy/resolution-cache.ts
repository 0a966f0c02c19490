/**
 * @module Resolutions shared by selection and instances: computed once however many ask at the same time,
 * kept in a bounded LRU (a client that names made-up selections cannot grow it), never across a reload.
 */
import type { Resolution } from "../resolve.js";

export const DEFAULT_RESOLUTIONS = 256;

export class ResolutionCache {
  private readonly entries = new Map<string, Resolution>();
  private readonly inflight = new Map<string, Promise<Resolution>>();
  private generation = 0;

  constructor(private readonly max = DEFAULT_RESOLUTIONS) {}

  get size(): number {
    return this.entries.size;
  }

  /**
   * The cached resolution, or a computed one. A cached resolution with a pack not enabled (other than by a
   * conflict, or forbidden to the principal) is computed again: its upstream may be back. A report (`use: false`) and a use never share one
   * computation; `keep: false` computes without caching (a session's own instances).
   */
  get(key: string, use: boolean, compute: () => Promise<Resolution>, keep = true): Promise<Resolution> {
    const cached = this.entries.get(key);
    if (cached?.unavailable.every((u) => u.reason === "conflict" || u.reason === "forbidden")) {
      this.entries.delete(key);
      this.entries.set(key, cached);
      return Promise.resolve(cached);
    }
    const flight = `${this.generation}|${use ? "use" : "report"}|${key}`;
    let p = this.inflight.get(flight);
    if (!p) {
      const generation = this.generation;
      p = compute()
        .then((r) => {
          if (keep && generation === this.generation) this.put(key, r);
          return r;
        })
        .finally(() => this.inflight.delete(flight));
      this.inflight.set(flight, p);
    }
    return p;
  }

  private put(key: string, r: Resolution): void {
    this.entries.delete(key);
    this.entries.set(key, r);
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }

  /** A reload: nothing computed before it is kept or shared after it. */
  clear(): void {
    this.entries.clear();
    this.generation++;
  }

  /** Drops the resolutions that requested a toolset on this upstream. */
  dropUpstream(upstream: string, upstreamsOf: (toolset: string) => readonly string[]): void {
    for (const [k, r] of this.entries) {
      if (r.requested.some((n) => upstreamsOf(n).includes(upstream))) this.entries.delete(k);
    }
  }
}
