/** @module Traffic from upstreams to sessions: who a notification or a server→client request belongs to. */
import type { Notification } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../log.js";
import { rpcError } from "./errors.js";
import type { Session } from "./session.js";

/** MCP logging levels, least severe first. */
export const LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];
const LEVELS = LOG_LEVELS;

/**
 * A shared upstream connection carries traffic for many sessions. Progress is routed by token (exact) and
 * resource updates by subscription. A server→client request or a log message is attributed to the one session
 * with calls in flight on that instance, else to the one session using it; when several could be meant it is
 * never guessed (that would hand one client's sampling, or its log lines, to another): a request is refused
 * with an error naming `isolation: per-session`, a log message is not delivered (and the proxy says so once).
 */
export class Traffic {
  private readonly inflight = new Map<string, Map<Session, number>>();
  private readonly subscriptions = new Map<string, Map<string, Set<Session>>>();
  /** The level last sent upstream with logging/setLevel, per instance. */
  private readonly levels = new Map<string, string>();
  /** Instances whose unattributable log messages were already reported. */
  private readonly unattributed = new Set<string>();

  constructor(
    private readonly sessionsUsing: (upstream: string) => Session[],
    private readonly logger: Logger,
  ) {}

  /** An instance is gone (closed, reaped, replaced by a reload): nothing about it is kept. */
  forgetInstance(id: string): void {
    this.inflight.delete(id);
    this.subscriptions.delete(id);
    this.levels.delete(id);
    this.unattributed.delete(id);
  }

  /** Marks a call of `session` in flight on `upstream`; returns the function that ends it. */
  begin(upstream: string, session: Session): () => void {
    const m = getOrCreate(this.inflight, upstream, () => new Map<Session, number>());
    m.set(session, (m.get(session) ?? 0) + 1);
    return () => {
      const n = (m.get(session) ?? 1) - 1;
      if (n <= 0) m.delete(session);
      else m.set(session, n);
      if (m.size === 0 && this.inflight.get(upstream) === m) this.inflight.delete(upstream);
    };
  }

  /**
   * The session an unsolicited message of this instance belongs to: the one with calls in flight on it, else
   * the one using it. Undefined, with the reason, when that is not exactly one.
   */
  attribute(upstream: string): { session: Session } | { session?: undefined; why: string } {
    const busy = [...(this.inflight.get(upstream)?.keys() ?? [])];
    const candidates = busy.length ? busy : this.sessionsUsing(upstream);
    if (candidates.length === 1) return { session: candidates[0]! };
    if (candidates.length === 0) return { why: "no client session is using it" };
    return {
      why: busy.length
        ? `${busy.length} client sessions have calls in flight on it`
        : `${candidates.length} client sessions share it`,
    };
  }

  async serverRequest(
    upstream: string,
    request: { method: string; params?: unknown },
    signal: AbortSignal,
  ): Promise<unknown> {
    const target = this.attribute(upstream);
    if (!target.session) {
      this.logger.warn("server request not routed", { upstream, method: request.method, why: target.why });
      throw rpcError(
        -32603,
        `toolpacks cannot tell which client ${request.method} is for: ${target.why} (declare the upstream with isolation: per-session)`,
      );
    }
    return target.session.forwardServerRequest(upstream, request, signal);
  }

  notification(upstream: string, n: Notification): void {
    if (n.method === "notifications/resources/updated") {
      const uri = (n.params as { uri?: string } | undefined)?.uri ?? "";
      for (const s of this.subscriptions.get(upstream)?.get(uri) ?? []) void s.notify(n, upstream);
      return;
    }
    if (n.method === "notifications/message") {
      const level = String((n.params as { level?: string } | undefined)?.level ?? "info");
      const target = this.attribute(upstream);
      if (!target.session) {
        if (!this.unattributed.has(upstream)) {
          this.unattributed.add(upstream);
          this.logger.warn("upstream log messages not delivered", {
            upstream,
            why: target.why,
            hint: "declare the upstream with isolation: per-session",
          });
        }
        return;
      }
      if (LEVELS.indexOf(level) >= LEVELS.indexOf(target.session.logLevel))
        void target.session.notify(n, upstream);
    }
  }

  /** Subscribes once upstream per URI however many sessions ask; returns whether the upstream must be asked. */
  subscribe(upstream: string, uri: string, session: Session): boolean {
    const byUri = getOrCreate(this.subscriptions, upstream, () => new Map<string, Set<Session>>());
    const first = !byUri.has(uri);
    getOrCreate(byUri, uri, () => new Set<Session>()).add(session);
    return first;
  }

  /** Returns whether the last subscriber left (the upstream must be told). */
  unsubscribe(upstream: string, uri: string, session: Session): boolean {
    const set = this.subscriptions.get(upstream)?.get(uri);
    if (!set?.delete(session)) return false;
    if (set.size) return false;
    this.subscriptions.get(upstream)?.delete(uri);
    return true;
  }

  /** Everything a closing session held: returns the (upstream, uri) pairs nobody subscribes to any more. */
  forget(session: Session): [string, string][] {
    const released: [string, string][] = [];
    for (const [upstream, byUri] of this.subscriptions) {
      for (const [uri, set] of byUri) {
        if (set.delete(session) && set.size === 0) {
          byUri.delete(uri);
          released.push([upstream, uri]);
        }
      }
    }
    for (const m of this.inflight.values()) m.delete(session);
    return released;
  }

  /** The most verbose level any session using `upstream` asked for; recorded as the one sent upstream. */
  upstreamLevel(upstream: string): string {
    let min = LEVELS.length - 1;
    for (const s of this.sessionsUsing(upstream)) min = Math.min(min, LEVELS.indexOf(s.logLevel));
    const level = LEVELS[Math.max(0, min)]!;
    this.levels.set(upstream, level);
    return level;
  }

  /**
   * The level to send upstream before a call of a session that wants `wanted`, when an earlier setLevel (of a
   * session that was alone then) left the upstream quieter than that; undefined when nothing needs sending.
   */
  levelToRaise(upstream: string, wanted: string): string | undefined {
    const sent = this.levels.get(upstream);
    if (sent === undefined || LEVELS.indexOf(wanted) >= LEVELS.indexOf(sent)) return undefined;
    return this.upstreamLevel(upstream);
  }
}

function getOrCreate<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let v = map.get(key);
  if (v === undefined) {
    v = make();
    map.set(key, v);
  }
  return v;
}
