/**
 * @module What bounds the HTTP sessions of one handler (SPEC §7.6): session admission (total, per client), the
 * slots and start rate of isolated upstream instances, and each transport's requests in flight and pending
 * output. Refusals become HTTP answers here; limits reached are counted and logged (loudly once a minute).
 */
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import { identityKey } from "../auth/requirements.js";
import type { Principal } from "../auth/types.js";
import { type Limits, withOverrides } from "../catalog/limits.js";
import type { Catalog } from "../catalog/types.js";
import type { Gateway } from "../proxy/gateway.js";
import { type InstanceSlots, slotsOf } from "../proxy/instance-slots.js";
import { refsOf } from "../proxy/instances.js";
import type { Session } from "../proxy/session.js";
import type { Selection } from "../selection.js";
import { TooManyInstances } from "../upstream/pool.js";
import { isRefused, LimitNotices, SessionAdmission, type Ticket } from "./admission.js";
import { clientKeyOf, trustedProxies } from "./client-key.js";
import type { TransportOptions } from "./session-transport.js";

/** An HTTP refusal: status, JSON-RPC error, headers. */
export interface LimitRefusal {
  readonly status: number;
  readonly code: number;
  readonly message: string;
  readonly headers?: Record<string, string>;
}

/** Limits given as serve options, over the config's `limits:`. */
export type LimitOverrides = Partial<Limits>;

export class SessionLimits {
  private readonly admission: SessionAdmission;
  private readonly slots: InstanceSlots<Session>;
  private readonly notices: LimitNotices;

  constructor(
    private readonly gateway: Gateway,
    readonly limits: () => Limits,
    /** True when a session may be closed to make room: no request in flight, no open GET stream. */
    idle: (id: string) => boolean,
    /** Who a request comes from, for per-client limits. */
    readonly clientOf: (req: IncomingMessage, principal?: Principal) => string,
  ) {
    this.admission = new SessionAdmission(limits, idle);
    this.slots = slotsOf<Session>(gateway);
    this.notices = new LimitNotices(gateway.logger);
  }

  /** Admits a newcomer of `client`, closing (with `drop`) the idle sessions that must make room; or refuses it. */
  async admit(client: string, drop: (id: string) => Promise<void>): Promise<Ticket | LimitRefusal> {
    const ticket = this.admission.admit(client);
    if (isRefused(ticket)) {
      this.gateway.metrics.limited.inc({ limit: ticket.limit });
      this.notices.say(ticket.limit, "new sessions refused: a session limit is reached", { client });
      const headers = { "retry-after": `${ticket.retryAfter}` };
      return { status: ticket.status, code: -32000, message: ticket.message, headers };
    }
    for (const old of ticket.evict) {
      this.gateway.metrics.limited.inc({ limit: "sessions" });
      this.notices.say("sessions", "idle sessions are closed to make room for new ones (limits.sessions)");
      await drop(old);
    }
    return ticket;
  }

  /**
   * Makes room for the isolated instances a new session needs: what to call once the session opened (or failed),
   * or a refusal when it cannot have them.
   */
  async instances(
    selection: Selection,
    headers: IncomingHttpHeaders,
    sessionKey: string,
    client: string,
  ): Promise<(() => void) | LimitRefusal> {
    try {
      return await this.reserve(selection, headers, sessionKey, client);
    } catch (err) {
      if (!(err instanceof TooManyInstances)) throw err;
      return refusalOf(err);
    }
  }

  /** The same for a 2026-07-28 context: the release to call once it opened, or throws TooManyInstances. */
  async reserve(
    selection: Selection,
    headers: IncomingHttpHeaders,
    sessionKey: string,
    client: string,
  ): Promise<() => void> {
    const refs = refsOf(this.gateway.catalog, this.gateway.upstreamsOf(selection), headers, sessionKey);
    try {
      return await this.slots.reserve(refs, client);
    } catch (err) {
      if (err instanceof TooManyInstances)
        this.notices.say(
          err.status === 429 ? "instances_per_minute" : "max_instances",
          "new sessions refused: no instance slot",
          { client },
        );
      throw err;
    }
  }

  /** A request of this session: it becomes the most recently used. */
  touch(id: string): void {
    this.admission.touch(id);
  }

  forget(id: string): void {
    this.admission.forget(id);
  }

  /** The bounds of one session's transport; `digest` names it in logs (none for a stateless request). */
  transport(digest: string | undefined): TransportOptions {
    const limits = this.limits();
    const { logger, metrics } = this.gateway;
    return {
      maxInFlight: limits.requestsPerSession,
      output: { pendingBytes: limits.pendingOutputBytes, stalledMs: limits.stalledReaderMs },
      outputEvents: {
        dropping: (pending) => {
          metrics.limited.inc({ limit: "pending_output_bytes" });
          logger.warn(
            "a client reads its response too slowly: notifications on it are dropped, progress keeps only the latest (limits.pending_output_bytes)",
            { session: digest, pending_bytes: pending },
          );
        },
        stalled: (pending, dropped) => {
          metrics.limited.inc({ limit: "stalled_reader_timeout" });
          logger.warn(
            "a client read nothing of its response for limits.stalled_reader_timeout: connection closed",
            {
              session: digest,
              pending_bytes: pending,
              dropped,
            },
          );
        },
      },
    };
  }
}

/** TooManyInstances as an HTTP answer: 503 (no slot) or 429 (too many new instances), with Retry-After. */
export function refusalOf(err: TooManyInstances): LimitRefusal {
  return {
    status: err.status,
    code: -32000,
    message: `${err.status === 429 ? "Too Many Requests" : "Service Unavailable"}: ${err.message}`,
    headers: { "retry-after": `${err.retryAfter}` },
  };
}

/**
 * A handler's limits in force (the config's `limits:` under the serve options' overrides, recomputed after a
 * reload) and who a request comes from (its principal, else its bearer token's digest, else its address).
 */
export function handlerLimits(
  gateway: Gateway,
  overrides: Partial<Limits> | undefined,
  proxies: readonly string[],
): { limits: () => Limits; clientOf: (req: IncomingMessage, principal?: Principal) => string } {
  const trusted = trustedProxies(proxies);
  let memo: { catalog: Catalog; limits: Limits } | undefined;
  const limits = (): Limits => {
    const catalog = gateway.catalog;
    if (memo?.catalog !== catalog) memo = { catalog, limits: withOverrides(catalog.limits, overrides) };
    return memo.limits;
  };
  const clientOf = (req: IncomingMessage, principal?: Principal) =>
    clientKeyOf(req, {
      proxies: trusted,
      authenticated: gateway.catalog.auth !== undefined,
      ...(principal ? { principal: identityKey(principal) } : {}),
    });
  return { limits, clientOf };
}
