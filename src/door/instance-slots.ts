/**
 * @module Slots for per-credential and per-session upstream instances (`max_instances` per upstream). A session
 * that needs a new instance when the upstream's slots are full takes the slot of an idle one: no session using it
 * has a request in flight, an open stream or a parked call, least recently used first (one nobody uses any more before any other); its sessions
 * are ended. Only when none is idle is the newcomer refused. New instances are also rate-limited per client
 * (`limits.instances_per_minute`, a token bucket), so no client can churn through everyone's slots.
 */
import type { InstanceRef } from "../upstream/instance.js";
import { errors } from "../wire/errors.js";
import { TokenBuckets } from "./token-buckets.js";

/** What slots need to know of a session that uses an instance. */
export interface SlotUser {
  /** When its client last sent anything. */
  readonly lastSeen: number;
  /** Its requests in flight (none: it is idle). */
  readonly busy: number;
  /** Something of it is open that ending it would cut (a stream, a listen stream, a parked call): not idle. */
  readonly holding?: boolean;
}

export interface SlotDeps<S extends SlotUser> {
  /** The running per-credential and per-session instances of an upstream. */
  isolated(upstream: string): readonly InstanceRef[];
  exists(ref: InstanceRef): boolean;
  maxInstances(upstream: string): number;
  /** The sessions that use an instance. */
  users(ref: InstanceRef): readonly S[];
  endSession(session: S): Promise<void>;
  /** Closes an instance at once (its sessions are ended already). */
  closeInstance(ref: InstanceRef): Promise<void>;
  instancesPerMinute(): number;
  now(): number;
  /** An idle instance was closed to give its slot to another. */
  tookOver?(ref: InstanceRef, sessions: number): void;
  /** A client was refused: `limit` is `instances_per_minute` or `max_instances`. */
  refused?(limit: string): void;
}

export class InstanceSlots<S extends SlotUser> {
  private readonly buckets: TokenBuckets;
  /** Instances being closed to make room: not chosen twice, not counted. */
  private readonly closing = new Set<string>();
  /** Slots promised to sessions still opening (ref id → upstream): counted until their instance runs. */
  private readonly promised = new Map<string, string>();

  constructor(private readonly deps: SlotDeps<S>) {
    this.buckets = new TokenBuckets(() => deps.now());
  }

  /**
   * Makes room for the instances these refs need that do not run yet, for `client`: throws the refusal
   * (429 past the client's rate, 503 when an upstream's slots are all busy). Starts nothing itself; the slots
   * stay promised until the returned function is called (once the session's instances run, or it failed).
   */
  async reserve(refs: ReadonlyMap<string, InstanceRef>, client: string): Promise<() => void> {
    const fresh = [...refs.values()].filter((r) => r.kind !== "shared" && !this.deps.exists(r));
    const mine: string[] = [];
    const release = () => {
      for (const id of mine.splice(0)) this.promised.delete(id);
    };
    if (!fresh.length) return release;
    const rate = this.deps.instancesPerMinute();
    const wait = this.buckets.take(client, fresh.length, rate);
    if (wait > 0) {
      this.deps.refused?.("instances_per_minute");
      const seconds = Math.ceil(wait / 1000);
      throw errors.instancesPerMinute(rate, seconds);
    }
    try {
      for (const ref of fresh) await this.makeRoom(ref, mine);
    } catch (err) {
      release();
      this.buckets.refund(client, fresh.length, rate);
      throw err;
    }
    return release;
  }

  /** Promises `ref` a slot (at once, so concurrent newcomers count it), first ending an idle instance if needed. */
  private async makeRoom(ref: InstanceRef, mine: string[]): Promise<void> {
    const max = this.deps.maxInstances(ref.upstream);
    const running = this.deps.isolated(ref.upstream).filter((r) => !this.closing.has(r.id));
    const ids = new Set(running.map((r) => r.id));
    for (const [id, upstream] of this.promised) if (upstream === ref.upstream) ids.add(id);
    const promise = () => {
      this.promised.set(ref.id, ref.upstream);
      mine.push(ref.id);
    };
    if (ids.size < max) return promise();
    const victim = this.idlest(running);
    if (!victim) {
      this.deps.refused?.("max_instances");
      throw errors.maxInstances(ref.upstream, running.length, max);
    }
    promise();
    this.closing.add(victim.id);
    try {
      const users = this.deps.users(victim);
      this.deps.tookOver?.(victim, users.length);
      await Promise.all(users.map((s) => this.deps.endSession(s)));
      await this.deps.closeInstance(victim);
    } finally {
      this.closing.delete(victim.id);
    }
  }

  /** The idle instance used least recently (one nobody uses first), or undefined when every one is busy or held. */
  private idlest(running: readonly InstanceRef[]): InstanceRef | undefined {
    let best: InstanceRef | undefined;
    let bestUse = Number.POSITIVE_INFINITY;
    for (const ref of running) {
      const users = this.deps.users(ref);
      if (users.some((s) => s.busy > 0 || s.holding === true)) continue;
      const lastUse = users.length ? Math.max(...users.map((s) => s.lastSeen)) : Number.NEGATIVE_INFINITY;
      if (lastUse < bestUse || best === undefined) {
        best = ref;
        bestUse = lastUse;
      }
    }
    return best;
  }
}
