/** @module Traffic from upstreams to sessions: who a notification or a server→client request belongs to. */
import type { Notification } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../log.js";
import { rpcError } from "./errors.js";
import type { Session } from "./session.js";

const LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/**
 * A shared upstream connection carries traffic for many sessions. Progress is routed by token (exact);
 * everything else a shared upstream sends while calls are in flight is attributed to the one session with
 * calls in flight on it, or to the one session using it; when several could be meant, a request is refused
 * (never guessed: that would hand one client's sampling to another) and a log message goes to all of them.
 */
export class Traffic {
  private readonly inflight = new Map<string, Map<Session, number>>();
  private readonly subscriptions = new Map<string, Map<string, Set<Session>>>();

  constructor(
    private readonly sessionsUsing: (upstream: string) => Session[],
    private readonly logger: Logger,
  ) {}

  /** Marks a call of `session` in flight on `upstream`; returns the function that ends it. */
  begin(upstream: string, session: Session): () => void {
    const m = getOrCreate(this.inflight, upstream, () => new Map<Session, number>());
    m.set(session, (m.get(session) ?? 0) + 1);
    return () => {
      const n = (m.get(session) ?? 1) - 1;
      if (n <= 0) m.delete(session);
      else m.set(session, n);
    };
  }

  /** The session an upstream's unsolicited message belongs to, or every candidate when it cannot be told. */
  candidates(upstream: string): Session[] {
    const busy = [...(this.inflight.get(upstream)?.keys() ?? [])];
    return busy.length ? busy : this.sessionsUsing(upstream);
  }

  async serverRequest(
    upstream: string,
    request: { method: string; params?: unknown },
    signal: AbortSignal,
  ): Promise<unknown> {
    const candidates = this.candidates(upstream);
    if (candidates.length !== 1) {
      const why =
        candidates.length === 0
          ? "no client session is using it"
          : `${candidates.length} client sessions share it`;
      this.logger.warn("server request not routed", { upstream, method: request.method, why });
      throw rpcError(
        -32603,
        `toolpacks cannot tell which client ${request.method} is for: ${why} (declare the upstream with isolation: per-session)`,
      );
    }
    return candidates[0]!.forwardServerRequest(upstream, request, signal);
  }

  notification(upstream: string, n: Notification): void {
    if (n.method === "notifications/resources/updated") {
      const uri = (n.params as { uri?: string } | undefined)?.uri ?? "";
      for (const s of this.subscriptions.get(upstream)?.get(uri) ?? []) void s.notify(n, upstream);
      return;
    }
    if (n.method === "notifications/message") {
      const level = String((n.params as { level?: string } | undefined)?.level ?? "info");
      for (const s of this.candidates(upstream))
        if (LEVELS.indexOf(level) >= LEVELS.indexOf(s.logLevel)) void s.notify(n, upstream);
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

  /** The most verbose level any session using `upstream` asked for. */
  upstreamLevel(upstream: string): string {
    let min = LEVELS.length - 1;
    for (const s of this.sessionsUsing(upstream)) min = Math.min(min, LEVELS.indexOf(s.logLevel));
    return LEVELS[Math.max(0, min)]!;
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
