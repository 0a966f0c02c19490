/** @module A session's calls in flight, per upstream, latest last. */
import { getOrCreate } from "../maps.js";

export class CallsByUpstream<C> {
  private readonly calls = new Map<string, C[]>();

  /** Marks `call` in flight to `upstream` until the returned function is called. */
  track(upstream: string, call: C): () => void {
    const calls = getOrCreate(this.calls, upstream, () => [] as C[]);
    calls.push(call);
    return () => {
      calls.splice(calls.indexOf(call), 1);
      if (!calls.length && this.calls.get(upstream) === calls) this.calls.delete(upstream);
    };
  }

  latest(upstream: string): C | undefined {
    return this.calls.get(upstream)?.at(-1);
  }
}
