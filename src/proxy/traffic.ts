/**
 * @module What upstream instances send that is tied to no forwarded call: who it belongs to, or nobody.
 * Progress (by token) and messages on a call's own stream never come here: they are tied to that call.
 * Resource updates go to the subscribers of that URI on that instance. A per-session instance's other
 * messages go to its one session. On a shared or per-credential instance an untied log line or request
 * belongs to no one: activity is not evidence (a client that keeps a slow call open must not receive another
 * client's log lines or answer its elicitations), so it is dropped (counted) or refused, unless the upstream
 * opted back into `attribution: in-flight` for a one-user deployment.
 */

import type { Upstream } from "../catalog/types.js";
import type { Logger } from "../log.js";
import { getOrCreate } from "../maps.js";
import { type InstanceRef, servesOneClient } from "../upstream/instance.js";
import { errors } from "../wire/errors.js";
import type { Signal } from "../wire/signal.js";
import type { Params, SessionTraffic } from "./host.js";
import { LOG_LEVELS, type LogLevel, type Peer, passes } from "./peer.js";

export interface TrafficDeps {
  /** The sessions that use an instance. */
  users(ref: InstanceRef): Peer[];
  upstream(name: string): Upstream | undefined;
  logger: Logger;
  /** Counts a message no session may have (`kind`: log, request, notification). */
  untied(upstream: string, kind: string): void;
  /** The process serves one client (stdio): every instance is that client's. */
  readonly oneClient?: boolean;
}

type Notification = { method: string; params?: Params };

/** Resource subscriptions one session may hold (each URI once). */
export const MAX_SUBSCRIPTIONS = 1000;

const IN_FLIGHT_WARNING =
  "attribution: in-flight delivers an upstream's untied log lines and requests to whichever client has a call open: safe with one user only";

/** The upstreams that opted back into in-flight attribution (warned about at start and reload). */
function inFlightUpstreams(catalog: { readonly upstreams: ReadonlyMap<string, Upstream> }): string[] {
  return [...catalog.upstreams.values()].filter((u) => u.attribution === "in-flight").map((u) => u.name);
}

/** Warns (at start and reload) when some upstream opted back into in-flight attribution. */
export function warnInFlight(
  logger: Logger,
  catalog: { readonly upstreams: ReadonlyMap<string, Upstream> },
): void {
  const risky = inFlightUpstreams(catalog);
  if (risky.length) logger.warn(IN_FLIGHT_WARNING, { upstreams: risky });
}

export class Traffic implements SessionTraffic {
  private readonly inflight = new Map<string, Map<Peer, number>>();
  private readonly subscriptions = new Map<string, Map<string, Set<Peer>>>();
  /** The instances that have subscriptions, by id. */
  private readonly subscribed = new Map<string, InstanceRef>();
  /** The level last sent upstream with logging/setLevel, per instance. */
  private readonly levels = new Map<string, LogLevel>();
  /** URL elicitations in progress: their completion goes to the client that got them. Bounded. */
  private readonly elicitations = new Map<string, Peer>();
  /** Subscriptions per session (bounded by MAX_SUBSCRIPTIONS). */
  private readonly subscribedBy = new WeakMap<Peer, number>();

  constructor(private readonly deps: TrafficDeps) {}

  /** An instance is gone (closed, reaped, replaced by a reload): nothing about it is kept. */
  forgetInstance(ref: InstanceRef): void {
    this.inflight.delete(ref.id);
    for (const peers of this.subscriptions.get(ref.id)?.values() ?? [])
      for (const p of peers) this.subscribedBy.set(p, Math.max(0, (this.subscribedBy.get(p) ?? 1) - 1));
    this.subscriptions.delete(ref.id);
    this.subscribed.delete(ref.id);
    this.levels.delete(ref.id);
  }

  begin(ref: InstanceRef, peer: Peer): () => void {
    // The instance's map stays while the instance does (forgetInstance drops it): one call at a time to an
    // instance would otherwise make and drop a map per call.
    const map = getOrCreate(this.inflight, ref.id, () => new Map<Peer, number>());
    map.set(peer, (map.get(peer) ?? 0) + 1);
    return () => {
      const n = (map.get(peer) ?? 1) - 1;
      if (n <= 0) map.delete(peer);
      else map.set(peer, n);
    };
  }

  elicited(ref: InstanceRef, elicitationId: string, peer: Peer): void {
    this.elicitations.set(`${ref.id}\u0000${elicitationId}`, peer);
    if (this.elicitations.size > 10_000) this.elicitations.delete(this.elicitations.keys().next().value!);
  }

  /** The one session an untied message of this instance belongs to, or why there is none. */
  private owner(ref: InstanceRef): { peer: Peer } | { peer?: undefined; why: string } {
    const owned = servesOneClient(ref, this.deps.oneClient === true);
    if (owned || this.deps.upstream(ref.upstream)?.attribution === "in-flight") {
      const busy = owned ? [] : [...(this.inflight.get(ref.id)?.keys() ?? [])];
      const candidates = busy.length ? busy : this.deps.users(ref);
      if (candidates.length === 1) return { peer: candidates[0]! };
      return { why: `${candidates.length} client sessions could be meant` };
    }
    return {
      why: `it is not tied to a call and the ${ref.kind} instance serves ${this.deps.users(ref).length} client session(s)`,
    };
  }

  async serverRequest(ref: InstanceRef, request: Notification, signal: Signal): Promise<Params> {
    const target = this.owner(ref);
    if (!target.peer) {
      this.deps.untied(ref.upstream, "request");
      this.deps.logger.debug("untied server request refused", {
        upstream: ref.upstream,
        method: request.method,
        why: target.why,
      });
      throw errors.untied(request.method, target.why);
    }
    return target.peer.ask(request, signal, ref.upstream);
  }

  notification(ref: InstanceRef, n: Notification): void {
    if (/^notifications\/(tools|prompts|resources)\/list_changed$/.test(n.method)) return;
    if (n.method === "notifications/resources/updated") {
      const uri = String(n.params?.uri ?? "");
      for (const peer of this.subscriptions.get(ref.id)?.get(uri) ?? []) peer.notify(n);
      return;
    }
    const id = n.params?.elicitationId;
    const elicited = typeof id === "string" ? this.elicitations.get(`${ref.id}\u0000${id}`) : undefined;
    if (elicited && n.method === "notifications/elicitation/complete") {
      this.elicitations.delete(`${ref.id}\u0000${id}`);
      elicited.notify(n, ref.upstream);
      return;
    }
    const target = this.owner(ref);
    const kind = n.method === "notifications/message" ? "log" : "notification";
    if (!target.peer) {
      this.deps.untied(ref.upstream, kind);
      this.deps.logger.debug("untied upstream message not delivered", {
        upstream: ref.upstream,
        method: n.method,
        why: target.why,
      });
      return;
    }
    if (kind === "log" && !passes(n.params?.level, target.peer.logLevel)) return;
    target.peer.notify(n, ref.upstream);
  }

  subscribe(ref: InstanceRef, uri: string, peer: Peer): boolean {
    const byUri = getOrCreate(this.subscriptions, ref.id, () => new Map<string, Set<Peer>>());
    const peers = byUri.get(uri);
    if (peers?.has(peer)) return false;
    const mine = this.subscribedBy.get(peer) ?? 0;
    if (mine >= MAX_SUBSCRIPTIONS) throw errors.subscriptions(MAX_SUBSCRIPTIONS);
    this.subscribedBy.set(peer, mine + 1);
    this.subscribed.set(ref.id, ref);
    getOrCreate(byUri, uri, () => new Set<Peer>()).add(peer);
    return peers === undefined;
  }

  unsubscribe(ref: InstanceRef, uri: string, peer: Peer): boolean {
    const byUri = this.subscriptions.get(ref.id);
    const set = byUri?.get(uri);
    if (!set?.delete(peer)) return false;
    this.subscribedBy.set(peer, Math.max(0, (this.subscribedBy.get(peer) ?? 1) - 1));
    if (set.size) return false;
    byUri!.delete(uri);
    return true;
  }

  /** Everything a closing session held: returns the (instance, uri) pairs nobody subscribes to any more. */
  forget(peer: Peer): [InstanceRef, string][] {
    const released: [InstanceRef, string][] = [];
    for (const [id, byUri] of this.subscriptions) {
      for (const [uri, set] of byUri) {
        if (set.delete(peer) && set.size === 0) {
          byUri.delete(uri);
          released.push([this.subscribed.get(id)!, uri]);
        }
      }
    }
    this.subscribedBy.delete(peer);
    for (const m of this.inflight.values()) m.delete(peer);
    for (const [k, p] of this.elicitations) if (p === peer) this.elicitations.delete(k);
    return released;
  }

  upstreamLevel(ref: InstanceRef): LogLevel {
    let min = LOG_LEVELS.length - 1;
    for (const p of this.deps.users(ref)) min = Math.min(min, LOG_LEVELS.indexOf(p.logLevel));
    const level = LOG_LEVELS[Math.max(0, min)]!;
    this.levels.set(ref.id, level);
    return level;
  }

  levelToRaise(ref: InstanceRef, wanted: LogLevel): LogLevel | undefined {
    const sent = this.levels.get(ref.id);
    if (sent === undefined || LOG_LEVELS.indexOf(wanted) >= LOG_LEVELS.indexOf(sent)) return undefined;
    return this.upstreamLevel(ref);
  }
}
