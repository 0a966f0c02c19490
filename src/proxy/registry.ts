/**
 * @module Every session of the process in one registry: a 2025 session (over HTTP or stdio), a 2026-07-28 context
 * (the session of requests that share a selection, credentials and identity), a session made for one request. By
 * id; by the client that opened it (what per-client limits count); by the upstream instances it uses (who an
 * instance's traffic may go to); least recently used first (what eviction and expiry take).
 */
import type { InstanceRef } from "../upstream/instance.js";

/** What a registered session is: a 2025 session, a 2026-07-28 context, or one made for one request. */
export type SessionKind = "session" | "context" | "request";

/** What the registry needs of a session. */
export interface Registered {
  /** The registry's key: a session id (a bearer secret: never logged), a context key, or a random one. */
  readonly id: string;
  readonly kind: SessionKind;
  /** Who opened it, as per-client limits count (SPEC §7.6). */
  readonly client: string;
  /** The instance of each upstream it uses. */
  readonly refs: ReadonlyMap<string, InstanceRef>;
}

export class Registry<S extends Registered> {
  /** In the order they were last used: the first is the least recently used. */
  private readonly byId = new Map<string, S>();
  private readonly byInstance = new Map<string, Set<S>>();
  private readonly byClient = new Map<string, Record<SessionKind, number>>();

  get size(): number {
    return this.byId.size;
  }

  get(id: string): S | undefined {
    return this.byId.get(id);
  }

  has(s: S): boolean {
    return this.byId.get(s.id) === s;
  }

  add(s: S): void {
    const old = this.byId.get(s.id);
    if (old) this.delete(old);
    this.byId.set(s.id, s);
    this.index(s, s.refs, 1);
    const counts = this.byClient.get(s.client) ?? { session: 0, context: 0, request: 0 };
    counts[s.kind]++;
    this.byClient.set(s.client, counts);
  }

  /** False when it was not (or no longer) registered. */
  delete(s: S): boolean {
    if (this.byId.get(s.id) !== s) return false;
    this.byId.delete(s.id);
    this.index(s, s.refs, -1);
    const counts = this.byClient.get(s.client);
    if (counts) {
      counts[s.kind]--;
      if (counts.session + counts.context + counts.request === 0) this.byClient.delete(s.client);
    }
    return true;
  }

  /** It was used: it becomes the most recently used. */
  touch(s: S): void {
    if (this.byId.get(s.id) !== s) return;
    this.byId.delete(s.id);
    this.byId.set(s.id, s);
  }

  /** A session moved to other instances (a reload placed it again): who uses which instance follows. */
  moved(s: S, before: ReadonlyMap<string, InstanceRef>): void {
    if (!this.has(s)) return;
    this.index(s, before, -1);
    this.index(s, s.refs, 1);
  }

  /** The sessions that use an instance. */
  users(ref: InstanceRef): S[] {
    const set = this.byInstance.get(ref.id);
    return set ? [...set] : [];
  }

  /** How many sessions of a kind a client holds (every client's, without one). */
  count(kind: SessionKind, client?: string): number {
    if (client !== undefined) return this.byClient.get(client)?.[kind] ?? 0;
    let n = 0;
    for (const c of this.byClient.values()) n += c[kind];
    return n;
  }

  /** The clients holding sessions of a kind, with how many each. */
  holders(kind: SessionKind): Map<string, number> {
    const out = new Map<string, number>();
    for (const [client, c] of this.byClient) if (c[kind] > 0) out.set(client, c[kind]);
    return out;
  }

  /** Every session, the least recently used first. */
  values(): IterableIterator<S> {
    return this.byId.values();
  }

  private index(s: S, refs: ReadonlyMap<string, InstanceRef>, delta: 1 | -1): void {
    for (const ref of refs.values()) {
      let set = this.byInstance.get(ref.id);
      if (delta > 0) {
        if (!set) {
          set = new Set();
          this.byInstance.set(ref.id, set);
        }
        set.add(s);
      } else if (set) {
        set.delete(s);
        if (!set.size) this.byInstance.delete(ref.id);
      }
    }
  }
}
