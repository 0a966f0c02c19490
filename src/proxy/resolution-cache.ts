/**
 * @module Resolutions shared by selection and instances: computed once however many ask at the same time,
 * kept in an LRU bounded by count and by routes held (a client that names made-up selections cannot grow
 * it, however large the catalog), never across a reload.
 */
import type { Resolution } from "../resolve.js";

export const DEFAULT_RESOLUTIONS = 256;
/**
 * Routes (tools, prompts and resources) held across the cached resolutions. A route costs about 170 bytes of
 * heap, so this is about 40 MB: 256 resolutions of a 1,000-tool catalog, 50 of a 5,000-tool one.
 */
export const DEFAULT_RESOLUTION_ROUTES = 250_000;

/** What a resolution holds, in routes. */
function routesOf(r: Resolution): number {
  return r.tools.length + r.prompts.length + r.resources.length;
}

export class ResolutionCache {
  private readonly entries = new Map<string, Resolution>();
  private readonly inflight = new Map<string, Promise<Resolution>>();
  private generation = 0;
  private held = 0;

  constructor(
    private readonly max = DEFAULT_RESOLUTIONS,
    private readonly maxRoutes = DEFAULT_RESOLUTION_ROUTES,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** Routes held by the cached resolutions. */
  get routes(): number {
    return this.held;
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

  /** Keeps `r` as the most recent; drops the least recent past either bound (the newest is always kept). */
  private put(key: string, r: Resolution): void {
    this.drop(key);
    this.entries.set(key, r);
    this.held += routesOf(r);
    while (this.entries.size > this.max || (this.held > this.maxRoutes && this.entries.size > 1)) {
      this.drop(this.entries.keys().next().value!);
    }
  }

  private drop(key: string): void {
    const r = this.entries.get(key);
    if (!r) return;
    this.entries.delete(key);
    this.held -= routesOf(r);
  }

  /** A reload: nothing computed before it is kept or shared after it. */
  clear(): void {
    this.entries.clear();
    this.held = 0;
    this.generation++;
  }

  /** Drops the resolutions that requested a toolset on this upstream. */
  dropUpstream(upstream: string, upstreamsOf: (toolset: string) => readonly string[]): void {
    for (const [k, r] of this.entries) {
      if (r.requested.some((n) => upstreamsOf(n).includes(upstream))) this.drop(k);
    }
  }
}
