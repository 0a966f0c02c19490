/**
 * @module The one set of limits on what callers make the proxy hold (SPEC §7.6), applied at the door with one
 * refusal shape: sessions and 2026-07-28 contexts (in total and per client), requests in flight per session, and
 * the slots and start rate of isolated upstream instances. Past a total, idle sessions make room, taken from the
 * client that holds the most first and never from a client under its fair share; a session with a request in
 * flight, an open stream or a parked call is never taken. Every limit reached is counted and said (loudly once a
 * minute per limit).
 */
import { type Limits, withOverrides } from "../catalog/limits.js";
import type { Catalog } from "../catalog/types.js";
import { LimitNotices } from "../limit-notices.js";
import type { Logger } from "../log.js";
import type { Registry, SessionKind } from "../proxy/registry.js";
import type { InstanceRef } from "../upstream/instance.js";
import { errors, WireError } from "../wire/errors.js";
import { InstanceSlots } from "./instance-slots.js";

/** 2026-07-28 contexts kept at once, and by one client (SPEC §7.6). */
const MAX_CONTEXTS = 1024;
const MAX_CONTEXTS_PER_CLIENT = 256;

/** What admission needs of a session. */
export interface Admitted {
  readonly id: string;
  readonly kind: SessionKind;
  readonly client: string;
  readonly refs: ReadonlyMap<string, InstanceRef>;
  readonly lastSeen: number;
  /** Requests being answered now. */
  readonly busy: number;
  /** True while something of it is open that closing it would cut (a stream, a listen stream, a parked call). */
  readonly holding: boolean;
}

export interface AdmissionDeps<S extends Admitted> {
  readonly registry: Registry<S>;
  readonly catalog: () => Catalog;
  readonly overrides?: Partial<Limits> | undefined;
  readonly logger: Logger;
  readonly limited: (limit: string) => void;
  readonly now: () => number;
  /** Ends a session to make room (it is idle). */
  readonly evict: (s: S) => Promise<void>;
  /** The running per-credential and per-session instances of an upstream. */
  readonly isolated: (upstream: string) => readonly InstanceRef[];
  readonly exists: (ref: InstanceRef) => boolean;
  readonly closeInstance: (ref: InstanceRef) => Promise<void>;
}

/** A place taken for a session while it opens: `bind` once it is registered, `release` if it failed. */
export interface Ticket {
  bind(): void;
  release(): void;
}

export class Admission<S extends Admitted> {
  private readonly notices: LimitNotices;
  private readonly slots: InstanceSlots<S>;
  /** Places taken by sessions still opening, by kind and client (they count, so concurrent opens cannot overshoot). */
  private readonly opening = new Map<string, number>();
  private memo: { catalog: Catalog; limits: Limits } | undefined;

  constructor(private readonly deps: AdmissionDeps<S>) {
    this.notices = new LimitNotices(deps.logger, deps.now);
    this.slots = new InstanceSlots<S>({
      isolated: deps.isolated,
      exists: deps.exists,
      maxInstances: (u) => deps.catalog().upstreams.get(u)?.maxInstances ?? 1,
      users: (ref) => deps.registry.users(ref),
      endSession: deps.evict,
      closeInstance: deps.closeInstance,
      instancesPerMinute: () => this.limits().instancesPerMinute,
      now: deps.now,
      tookOver: (ref, sessions) => {
        deps.limited("max_instances");
        deps.logger.info("an idle instance gave its slot to a new one (max_instances)", {
          upstream: ref.upstream,
          instance: ref.kind === "shared" ? "shared" : `${ref.kind}:${ref.key.slice(0, 8)}`,
          sessions_ended: sessions,
        });
      },
      refused: (limit) => deps.limited(limit),
    });
  }

  /** The limits in force: the config's `limits:` under the serve (or library) options, recomputed after a reload. */
  limits(): Limits {
    const catalog = this.deps.catalog();
    if (this.memo?.catalog !== catalog)
      this.memo = { catalog, limits: withOverrides(catalog.limits, this.deps.overrides) };
    return this.memo.limits;
  }

  /**
   * A place for a new session (or context) of `client`: refused past the client's own bound; past the total,
   * idle ones are ended to make room (see the module), refused when none may be.
   */
  async admit(kind: "session" | "context", client: string): Promise<Ticket | WireError> {
    const limits = this.limits();
    const total = kind === "session" ? limits.sessions : MAX_CONTEXTS;
    const perClient = kind === "session" ? limits.sessionsPerClient : MAX_CONTEXTS_PER_CLIENT;
    const mine = this.held(kind, client);
    if (mine >= perClient) {
      if (kind === "session")
        return this.refuse("sessions_per_client", errors.sessionsPerClient(mine, perClient), client);
      // A client past its own bound of contexts gives up its own least recently used idle one.
      const own = this.idle(kind, client, 1);
      if (!own.length) return this.refuse("contexts_per_client", errors.contexts(perClient, true), client);
      await this.make(kind, own);
    }
    const over = this.held(kind) + 1 - total;
    if (over > 0) {
      const room = this.victims(kind, client, over);
      if (room.length < over) {
        const refusal = kind === "session" ? errors.sessions(total) : errors.contexts(total, false);
        return this.refuse(kind === "session" ? "sessions" : "contexts", refusal, client);
      }
      await this.make(kind, room);
    }
    const key = `${kind}\0${client}`;
    this.opening.set(key, (this.opening.get(key) ?? 0) + 1);
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      const n = (this.opening.get(key) ?? 1) - 1;
      if (n > 0) this.opening.set(key, n);
      else this.opening.delete(key);
    };
    return { bind: settle, release: settle };
  }

  /** `n` more requests for a session: refused past `limits.requests_per_session`. */
  enter(session: S, n: number): WireError | undefined {
    const max = this.limits().requestsPerSession;
    if (n === 0 || session.busy + n <= max) return undefined;
    this.deps.limited("requests_per_session");
    return errors.inFlight(session.busy, max, session.kind === "context" ? "context" : "session");
  }

  /**
   * Slots for the isolated instances of `refs` that do not run yet, taken for `client`: the release to call once
   * they run (or the session failed), or the refusal (no slot: 503; too many new instances: 429).
   */
  async instances(refs: ReadonlyMap<string, InstanceRef>, client: string): Promise<(() => void) | WireError> {
    try {
      return await this.slots.reserve(refs, client);
    } catch (err) {
      if (!(err instanceof WireError)) throw err;
      const limit = err.status === 429 ? "instances_per_minute" : "max_instances";
      this.notices.say(limit, "new sessions refused: no instance slot", { client });
      return err;
    }
  }

  /** Sessions of a kind held by a client (every client's without one), those still opening included. */
  private held(kind: SessionKind, client?: string): number {
    let opening = 0;
    for (const [key, n] of this.opening) {
      const [k, c] = key.split("\0") as [SessionKind, string];
      if (k === kind && (client === undefined || c === client)) opening += n;
    }
    return this.deps.registry.count(kind, client) + opening;
  }

  /** Up to `n` idle sessions of a kind of one client, least recently used first. */
  private idle(kind: SessionKind, client: string, n: number): S[] {
    const out: S[] = [];
    for (const s of this.deps.registry.values()) {
      if (out.length >= n) break;
      if (s.kind === kind && s.client === client && s.busy === 0 && !s.holding) out.push(s);
    }
    return out;
  }

  /**
   * The idle sessions that make room for one more of `newcomer`: from the client holding the most first, each
   * time the heaviest that has one idle and holds more than its fair share (the total over the clients holding
   * any, the newcomer counted, rounded down, at least one); the newcomer's own idle ones may always go. Fewer than
   * `n` when no more may go: then the newcomer is refused, and nobody at or under its share loses a session.
   */
  private victims(kind: SessionKind, newcomer: string, n: number): S[] {
    const counts = this.deps.registry.holders(kind);
    if (!counts.has(newcomer)) counts.set(newcomer, 0);
    const limits = this.limits();
    const total = kind === "session" ? limits.sessions : MAX_CONTEXTS;
    const fair = Math.max(1, Math.floor(total / counts.size));
    const idle = new Map<string, S[]>();
    for (const s of this.deps.registry.values()) {
      if (s.kind !== kind || s.busy > 0 || s.holding) continue;
      const list = idle.get(s.client) ?? [];
      list.push(s);
      idle.set(s.client, list);
    }
    const out: S[] = [];
    while (out.length < n) {
      let pick: string | undefined;
      for (const [client, held] of counts) {
        if (!idle.get(client)?.length) continue;
        if (client !== newcomer && held <= fair) continue;
        if (pick === undefined || held > counts.get(pick)!) pick = client;
      }
      if (pick === undefined) break;
      out.push(idle.get(pick)!.shift()!);
      counts.set(pick, counts.get(pick)! - 1);
    }
    return out;
  }

  private async make(kind: SessionKind, room: readonly S[]): Promise<void> {
    const limit = kind === "session" ? "sessions" : "contexts";
    for (const s of room) {
      this.deps.limited(limit);
      this.notices.say(
        limit,
        `idle ${kind === "session" ? "sessions" : "contexts"} are closed to make room for new ones`,
      );
      await this.deps.evict(s);
    }
  }

  private refuse(limit: string, refusal: WireError, client: string): WireError {
    this.deps.limited(limit);
    this.notices.say(limit, "new sessions refused: a session limit is reached", { client });
    return refusal;
  }
}
