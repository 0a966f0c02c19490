/**
 * @module The one set of limits on what callers make the proxy hold (SPEC §7.6), applied at the door with one
 * refusal shape: sessions and 2026-07-28 contexts (in total and per client), requests in flight per session,
 * `subscriptions/listen` streams and calls parked for a retry (in total and per client, across all of a client's
 * contexts), the slots and start rate of isolated upstream instances, and file-descriptor headroom. Past a total,
 * idle sessions make room, taken from the client that holds the most first and never from a client under its
 * fair share; a session with a request in flight, an open stream or a parked call is never taken. Every limit
 * reached is counted and said (loudly once a minute per limit).
 */
import { type Limits, withOverrides } from "../catalog/limits.js";
import type { Catalog } from "../catalog/types.js";
import { LimitNotices } from "../limit-notices.js";
import type { Logger } from "../log.js";
import type { Registry, SessionKind } from "../proxy/registry.js";
import type { InstanceRef } from "../upstream/instance.js";
import { errors, WireError } from "../wire/errors.js";
import { type FdGauge, FdHeadroom, procFdGauge } from "./fd-headroom.js";
import { InstanceSlots } from "./instance-slots.js";

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
  /** Calls parked for a retry, of one client (of every client, without one). */
  readonly parked?: (client?: string) => number;
  /** Open file descriptors and their limit (default: this process's, from /proc; none: no headroom check). */
  readonly fds?: FdGauge;
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
  /** Open listen streams, by client. */
  private readonly listening = new Map<string, number>();
  private listeningTotal = 0;
  private readonly fds: FdHeadroom;

  constructor(private readonly deps: AdmissionDeps<S>) {
    this.notices = new LimitNotices(deps.logger, deps.now);
    this.fds = new FdHeadroom(deps.fds ?? procFdGauge(), deps.now);
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
    const low = this.headroom(client);
    if (low) return low;
    const limits = this.limits();
    const total = kind === "session" ? limits.sessions : limits.contexts;
    const perClient = kind === "session" ? limits.sessionsPerClient : limits.contextsPerClient;
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

  /**
   * Refused while free file descriptors are fewer than the headroom (SPEC §7.6): what would hold new ones
   * (a session, a context, a listen stream, a session of one request) is not taken; what runs keeps going.
   */
  headroom(client: string): WireError | undefined {
    const low = this.fds.low();
    if (!low) return undefined;
    this.deps.limited("fd_headroom");
    this.notices.say(
      "fd_headroom",
      "new sessions and streams refused: the process is near its open-file limit",
      {
        client,
        open: low.open,
        limit: low.limit,
      },
    );
    return errors.fdHeadroom(low.open, low.limit);
  }

  /**
   * A place for one more `subscriptions/listen` stream of `client`, across all its contexts: the release to call
   * when the stream ends, or the refusal (past `limits.listen_streams_per_client` or `limits.listen_streams`, or
   * without fd headroom).
   */
  listen(client: string): (() => void) | WireError {
    const low = this.headroom(client);
    if (low) return low;
    const limits = this.limits();
    const mine = this.listening.get(client) ?? 0;
    if (mine >= limits.listenStreamsPerClient)
      return this.refuse(
        "listen_streams_per_client",
        errors.listenStreams(limits.listenStreamsPerClient, "client"),
        client,
      );
    if (this.listeningTotal >= limits.listenStreams)
      return this.refuse("listen_streams", errors.listenStreams(limits.listenStreams, "total"), client);
    this.listening.set(client, mine + 1);
    this.listeningTotal++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.listeningTotal--;
      const n = (this.listening.get(client) ?? 1) - 1;
      if (n > 0) this.listening.set(client, n);
      else this.listening.delete(client);
    };
  }

  /** Why one more call of `client` may not park for a retry (past `limits.parked_calls[_per_client]`), if so. */
  park(client: string): WireError | undefined {
    const parked = this.deps.parked;
    if (!parked) return undefined;
    const limits = this.limits();
    if (parked(client) >= limits.parkedCallsPerClient)
      return this.refuse(
        "parked_calls_per_client",
        errors.parkedCalls(limits.parkedCallsPerClient, true),
        client,
      );
    if (parked() >= limits.parkedCalls)
      return this.refuse("parked_calls", errors.parkedCalls(limits.parkedCalls, false), client);
    return undefined;
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
    const total = kind === "session" ? limits.sessions : limits.contexts;
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
    this.notices.say(limit, `refused: limits.${limit} is reached`, { client });
    return refusal;
  }
}
