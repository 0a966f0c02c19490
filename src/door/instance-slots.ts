/**
 * @module Slots for per-credential, per-user and per-session upstream instances (`max_instances` per upstream). A
 * session that needs a new instance when the upstream's slots are full takes the slot of an idle one (no session
 * using it has a request in flight, an open stream or a parked call), fairly, as sessions are taken: one nobody
 * uses any more first, then from the client holding the most instances of the upstream, never from a client at or
 * under its fair share; its sessions are ended. When none may go, the newcomer is refused. New instances are also rate-limited per client
 * (`limits.instances_per_minute`, a token bucket), so no client can churn through everyone's slots.
 */
import type { InstanceRef } from "../upstream/instance.js";
import { errors } from "../wire/errors.js";
import { TokenBuckets } from "./token-buckets.js";

/** What slots need to know of a session that uses an instance. */
export interface SlotUser {
  /** Its client's key (who per-client limits count): an instance is held by the client of its latest session. */
  readonly client: string;
  /** When its client last sent anything. */
  readonly lastSeen: number;
  /** Its requests in flight (none: it is idle). */
  readonly busy: number;
  /** A listen stream or a parked call is open on it: its instance keeps its slot (a GET stream alone does not). */
  readonly pinned?: boolean;
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
  /** Slots promised to sessions still opening (by ref id), and to whom: counted until their instance runs. */
  private readonly promised = new Map<string, { upstream: string; client: string }>();

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
      for (const ref of fresh) await this.makeRoom(ref, client, mine);
    } catch (err) {
      release();
      this.buckets.refund(client, fresh.length, rate);
      throw err;
    }
    return release;
  }

  /** Promises `ref` a slot (at once, so concurrent newcomers count it), first ending an idle instance if needed. */
  private async makeRoom(ref: InstanceRef, client: string, mine: string[]): Promise<void> {
    const max = this.deps.maxInstances(ref.upstream);
    const running = this.deps.isolated(ref.upstream).filter((r) => !this.closing.has(r.id));
    const ids = new Set(running.map((r) => r.id));
    for (const [id, p] of this.promised) if (p.upstream === ref.upstream) ids.add(id);
    const promise = () => {
      this.promised.set(ref.id, { upstream: ref.upstream, client });
      mine.push(ref.id);
    };
    if (ids.size < max) return promise();
    const victim = this.victim(ref.upstream, running, client, max);
    if (typeof victim === "string") {
      this.deps.refused?.("max_instances");
      throw errors.maxInstances(ref.upstream, running.length, max, victim);
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

  /**
   * The idle instance whose slot goes to `newcomer`, taken as sessions are (admission's `victims`): one no
   * session uses first (it costs nobody anything); else from the client holding the most instances of the
   * upstream, the heaviest that has one idle and holds more than its fair share (`max_instances` over the clients
   * holding any, the newcomer counted, rounded down, at least one), its least recently used; the newcomer's own
   * idle ones may always go. An instance is held by the client of its most recent session; a promised slot by the
   * client it was promised to. Without a victim, why: every one is busy, or the idle ones are within their shares.
   */
  private victim(
    upstream: string,
    running: readonly InstanceRef[],
    newcomer: string,
    max: number,
  ): InstanceRef | "busy" | "shares" {
    const counts = new Map<string, number>([[newcomer, 0]]);
    const count = (client: string) => counts.set(client, (counts.get(client) ?? 0) + 1);
    const idle = new Map<string, { ref: InstanceRef; lastUse: number }[]>();
    const here = new Set(running.map((r) => r.id));
    for (const [id, p] of this.promised) if (p.upstream === upstream && !here.has(id)) count(p.client);
    for (const ref of running) {
      const promised = this.promised.get(ref.id);
      // A promised instance runs before its session is registered: it is not unused, it is about to be used.
      if (promised) {
        count(promised.client);
        continue;
      }
      const users = this.deps.users(ref);
      if (!users.length) return ref;
      const latest = users.reduce((a, b) => (b.lastSeen > a.lastSeen ? b : a));
      count(latest.client);
      if (users.some((s) => s.busy > 0 || s.pinned === true)) continue;
      const list = idle.get(latest.client) ?? [];
      list.push({ ref, lastUse: latest.lastSeen });
      idle.set(latest.client, list);
    }
    if (!idle.size) return "busy";
    const fair = Math.max(1, Math.floor(max / counts.size));
    let pick: { client: string; held: number; lastUse: number; ref: InstanceRef } | undefined;
    for (const [client, list] of idle) {
      const held = counts.get(client)!;
      if (client !== newcomer && held <= fair) continue;
      const oldest = list.reduce((a, b) => (b.lastUse < a.lastUse ? b : a));
      if (!pick || held > pick.held || (held === pick.held && oldest.lastUse < pick.lastUse))
        pick = { client, held, ...oldest };
    }
    return pick ? pick.ref : "shares";
  }
}
