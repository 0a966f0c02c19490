/**
 * @module Session admission: at most `sessions` open in total and `sessionsPerClient` per client. A client past
 * its own bound is refused; past the total, the least recently used idle sessions are closed to make room,
 * and a newcomer is refused only when none is idle. A session is counted from the moment it is admitted
 * (while it opens), so concurrent opens cannot overshoot; a request that has no session (stateless) is
 * admitted the same way for as long as it lasts.
 */

export interface AdmissionLimits {
  readonly sessions: number;
  readonly sessionsPerClient: number;
}

/** A refusal: the HTTP status, the JSON-RPC message naming the limit, and when to retry. */
export interface Refused {
  readonly refused: true;
  readonly limit: "sessions" | "sessions_per_client";
  readonly status: 503;
  readonly message: string;
  readonly retryAfter: number;
}

/** An admitted newcomer: the ids to close first (to make room), then `bind` its id, or `release` if it failed. */
export interface Ticket {
  readonly refused?: false;
  readonly client: string;
  /** Sessions to close before this one opens: idle, least recently used first. Already uncounted. */
  readonly evict: readonly string[];
  bind(id: string): void;
  release(): void;
}

const RETRY_AFTER_SECONDS = 30;

export class SessionAdmission {
  /** Admitted sessions by id, least recently used first (a request moves its session to the end). */
  private readonly order = new Map<string, string>();
  private readonly perClient = new Map<string, number>();
  /** Admitted but not yet bound to an id (opening). */
  private opening = 0;

  constructor(
    private readonly limits: () => AdmissionLimits,
    /** True when a session may be closed to make room: no request in flight and no open GET stream. */
    private readonly idle: (id: string) => boolean,
  ) {}

  get size(): number {
    return this.order.size + this.opening;
  }

  clientCount(client: string): number {
    return this.perClient.get(client) ?? 0;
  }

  admit(client: string): Ticket | Refused {
    const { sessions, sessionsPerClient } = this.limits();
    const mine = this.clientCount(client);
    if (mine >= sessionsPerClient) {
      return {
        refused: true,
        limit: "sessions_per_client",
        status: 503,
        retryAfter: RETRY_AFTER_SECONDS,
        message: `Service Unavailable: this client already has ${mine} open sessions, the most one client may hold (limits.sessions_per_client: ${sessionsPerClient}); end sessions it no longer uses (DELETE) or wait for them to expire`,
      };
    }
    const evict: string[] = [];
    const over = this.size + 1 - sessions;
    if (over > 0) {
      for (const id of this.order.keys()) {
        if (evict.length >= over) break;
        if (this.idle(id)) evict.push(id);
      }
      if (evict.length < over) {
        return {
          refused: true,
          limit: "sessions",
          status: 503,
          retryAfter: RETRY_AFTER_SECONDS,
          message: `Service Unavailable: the server holds its most sessions (limits.sessions: ${sessions}) and none is idle; retry later`,
        };
      }
      for (const id of evict) this.forget(id);
    }
    this.opening++;
    this.count(client, 1);
    let settled = false;
    return {
      client,
      evict,
      bind: (id) => {
        if (settled) return;
        settled = true;
        this.opening--;
        this.order.set(id, client);
      },
      release: () => {
        if (settled) return;
        settled = true;
        this.opening--;
        this.count(client, -1);
      },
    };
  }

  /** A request of this session: it becomes the most recently used. */
  touch(id: string): void {
    const client = this.order.get(id);
    if (client === undefined) return;
    this.order.delete(id);
    this.order.set(id, client);
  }

  /** The session ended (or was chosen to make room): it no longer counts. */
  forget(id: string): void {
    const client = this.order.get(id);
    if (client === undefined) return;
    this.order.delete(id);
    this.count(client, -1);
  }

  private count(client: string, delta: number): void {
    const n = (this.perClient.get(client) ?? 0) + delta;
    if (n <= 0) this.perClient.delete(client);
    else this.perClient.set(client, n);
  }
}

export function isRefused(x: Ticket | Refused): x is Refused {
  return x.refused === true;
}

export { LimitNotices } from "../limit-notices.js";
