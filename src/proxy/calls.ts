/** @module A session's calls in flight, per upstream, latest last. */
import { getOrCreate } from "../maps.js";

export class CallsByUpstream<C> {
  private readonly calls = new Map<string, C[]>();

  /**
   * Marks `call` in flight to `upstream` until the returned function is called. An upstream's list stays once
   * made (a session names a bounded set of upstreams), so a call does not make and drop one.
   */
  track(upstream: string, call: C): () => void {
    const calls = getOrCreate(this.calls, upstream, () => [] as C[]);
    calls.push(call);
    return () => {
      const i = calls.lastIndexOf(call);
      if (i >= 0) calls.splice(i, 1);
    };
  }

  latest(upstream: string): C | undefined {
    return this.calls.get(upstream)?.at(-1);
  }
}
