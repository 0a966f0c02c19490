/**
 * @module 2025 sessions at the door: opened by an initialize (or for one request, stateless), found by their id
 * (or rebuilt on this replica from a signed one), bound to the caller that opened them, expired when idle, ended
 * by DELETE. Who calls is the caller value; limits and instances are admission's; the session lives in the one
 * registry.
 */
import { randomUUID } from "node:crypto";
import type { Requires } from "../auth/types.js";
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "../protocol.js";
import { sessionLog } from "../proxy/client-profiles.js";
import type { Gateway } from "../proxy/gateway.js";
import type { Session } from "../proxy/session.js";
import type { SessionTransport } from "../proxy/transport.js";
import type { Unavailable } from "../resolve/types.js";
import { errors, WireError } from "../wire/errors.js";
import type { Admission } from "./admission.js";
import type { Connect } from "./arrival.js";
import { type Caller, instancesOf } from "./caller.js";
import { sessionDigest } from "./digest.js";
import {
  mayHaveEnded,
  type SessionSeed,
  signSessionId,
  subjectDigest,
  verifySessionId,
} from "./session-id.js";

/** Why a session leaves: a client's DELETE, idle expiry, shutdown, or a DELETE on another replica. */
export type Leaving = "deleted" | "expired" | "shutdown" | "ended-elsewhere";

export interface SessionsOptions {
  readonly sessionIdleMs: number;
  /** With a secret shared by replicas, ids are signed seeds any replica can rebuild a session from. */
  readonly sessionSecret?: string | undefined;
}

/** How a session is opened: for the client's initialize, replaying one (a rebuild, stateless), for one request. */
export interface OpenHow {
  /** The client's own initialize params, sealed into a signed id. */
  readonly seed?: Record<string, unknown>;
  /** Replay this initialize instead of waiting for the client's (a rebuild; each stateless request). */
  readonly replay?: Record<string, unknown>;
  /** The id to open it under (a rebuild). */
  readonly id?: string;
  /** It serves one request: never registered by an id a client could name. */
  readonly stateless?: boolean;
  /** The one session of a stdio connection (no id goes on the wire). */
  readonly stdio?: boolean;
  /**
   * The caller its client's initialize makes it (its profile matched from the params), when that differs from the
   * one it opened with: a stdio session opens before its client says who it is (SPEC §14.5).
   */
  readonly initialized?: (params: Record<string, unknown>) => Caller | undefined;
}

export class LegacySessions {
  private readonly rebuilding = new Map<string, Promise<Session | WireError>>();
  private readonly sweep: NodeJS.Timeout;

  constructor(
    private readonly gateway: Gateway,
    private readonly admission: Admission<Session>,
    private readonly options: SessionsOptions,
  ) {
    this.sweep = setInterval(() => this.expire(), Math.min(options.sessionIdleMs, 60_000));
    this.sweep.unref();
  }

  /** Open sessions (those of one request excepted). */
  get size(): number {
    let n = 0;
    for (const s of this.gateway.sessions.values()) if (s.kind === "session" && !s.oneRequest) n++;
    return n;
  }

  /** Opens a session for `caller`, its transport made by `connect`; or the refusal. */
  async open(caller: Caller, how: OpenHow, connect: Connect<SessionTransport>): Promise<Session | WireError> {
    const { selection, principal } = caller;
    const id =
      how.id ?? (how.stateless || how.stdio ? randomUUID() : this.newId(how.seed ?? {}, caller, how));
    const digest = sessionDigest(id);
    const ticket = await this.admission.admit("session", caller.client);
    if (ticket instanceof WireError) return ticket;
    let session: Session;
    try {
      const refs = instancesOf(this.gateway.catalog, caller, id);
      const slots = await this.admission.instances(refs, caller.client);
      if (slots instanceof WireError) {
        ticket.release();
        return slots;
      }
      session = await this.gateway
        .open({
          id,
          kind: "session",
          client: caller.client,
          selection,
          refs,
          credentials: caller.credentials,
          binding: caller.binding,
          identity: caller.identity,
          principal,
          digest: how.stdio ? "stdio" : digest,
          ...(how.stateless ? { oneRequest: true } : {}),
          ...(how.initialized
            ? { initializing: (params) => this.refit(session, how.initialized!(params), params) }
            : {}),
        })
        .finally(slots);
    } catch (err) {
      ticket.release();
      if (err instanceof WireError) return err;
      throw err;
    }
    ticket.bind();
    await session.connect(connect({ id, digest, admit: (n) => this.admission.enter(session, n) }));
    if (how.replay) session.replay(how.replay);
    if (how.stdio) return session;
    const r = session.resolution;
    const said = how.seed ?? how.replay;
    const told = sessionLog(this.gateway, selection, r, (said?.clientInfo as { name?: unknown })?.name);
    this.gateway.logger[how.stateless ? "debug" : "info"](how.id ? "session rebuilt" : "session opened", {
      session: how.stateless ? undefined : digest,
      active: r.active,
      tools: r.tools.length,
      ...(selection.unknown.length ? { unknown: selection.unknown } : {}),
      ...(r.unavailable.length ? { not_enabled: r.unavailable.map(notEnabled) } : {}),
      ...told.fields,
    });
    if (told.warning) this.gateway.logger.warn(told.warning, { session: digest, ...told.fields });
    return session;
  }

  /**
   * Serves a session the selection of the caller its initialize made it (nothing when there is none), on that
   * caller's instances, before the initialize is answered; one that cannot be (no instance slot, the resolution
   * failed) keeps what it had, said at warn.
   */
  private async refit(
    session: Session,
    caller: Caller | undefined,
    params: Record<string, unknown>,
  ): Promise<void> {
    if (!caller) return;
    const log = this.gateway.logger;
    const refs = instancesOf(this.gateway.catalog, caller, session.sessionKey);
    const slots = await this.admission.instances(refs, caller.client);
    try {
      if (slots instanceof WireError) throw slots;
      await this.gateway.refit(session, caller.selection, refs);
    } catch (err) {
      log.warn("the client's profile could not be applied; serving the session as it opened", {
        session: session.digest,
        error: (err as Error).message,
      });
      return;
    } finally {
      if (!(slots instanceof WireError)) slots();
    }
    const r = session.resolution;
    const told = sessionLog(
      this.gateway,
      caller.selection,
      r,
      (params.clientInfo as { name?: unknown })?.name,
    );
    log.info("client profile applied", {
      session: session.digest,
      active: r.active,
      tools: r.tools.length,
      ...told.fields,
    });
    if (told.warning) log.warn(told.warning, { session: session.digest, ...told.fields });
  }

  /**
   * The session a request names: known here, or rebuilt from a signed id; 400/403/404 otherwise. A session serves
   * only requests that carry exactly the credential values and identity it was opened with (POST, GET and DELETE
   * alike): a session id alone never lends someone's upstream instance, or their credentials, to another request.
   * `callerFor` works out the request's caller for a selection (the session's, or a signed id's query).
   */
  async find(
    id: string | undefined,
    version: string | undefined,
    callerFor: (of: { query: string; init: Record<string, unknown> } | Session) => Caller | WireError,
    connect: Connect<SessionTransport>,
  ): Promise<{ session: Session; caller: Caller } | WireError> {
    if (!id) return errors.sessionIdRequired();
    if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version))
      return errors.unsupportedVersionHeader(version);
    const registry = this.gateway.sessions;
    // Ended here or, through a shared store, on another replica: a local, synchronous lookup.
    if (this.gateway.state.isEnded(id)) {
      const known = registry.get(id);
      if (known) await this.drop(known, "ended-elsewhere");
      return errors.sessionNotFound();
    }
    let session = registry.get(id);
    if (session && (session.kind !== "session" || session.oneRequest)) session = undefined;
    const secret = this.options.sessionSecret;
    if (!session && secret) {
      const seed = verifySessionId(id, secret);
      if (!seed) return errors.sessionNotFound();
      // Ended, and pushed out of the remembered ended ids by later ones: still ended (SPEC §8.1).
      if (mayHaveEnded(seed, this.gateway.state.forgottenUntil())) return errors.sessionNotFound();
      const caller = callerFor({ query: seed.q, init: { clientInfo: seed.i, capabilities: seed.c } });
      if (caller instanceof WireError) return caller;
      if (seed.s !== subjectDigest(caller.principal, secret)) return errors.anotherIdentity();
      if (seed.b !== caller.binding) return errors.credentialsDiffer();
      let p = this.rebuilding.get(id);
      if (!p) {
        p = this.rebuild(caller, id, seed, connect).finally(() => this.rebuilding.delete(id));
        this.rebuilding.set(id, p);
      }
      const rebuilt = await p;
      if (rebuilt instanceof WireError) return rebuilt;
      session = rebuilt;
    }
    if (!session) return errors.sessionNotFound();
    const caller = callerFor(session);
    if (caller instanceof WireError) return caller;
    if (session.identity !== caller.identity) return errors.anotherIdentity();
    if (session.binding !== caller.binding) return errors.credentialsDiffer();
    session.lastSeen = this.gateway.now();
    registry.touch(session);
    return { session, caller };
  }

  /** What a session's later requests must still be granted: the requirements of its active gated toolsets. */
  granted(session: Session): Requires[] {
    const out: Requires[] = [];
    for (const name of session.selection.active) {
      const requires = this.gateway.catalog.toolset.get(name)?.requires;
      if (requires) out.push(requires);
    }
    return out;
  }

  /**
   * Closes a session here. A DELETE ends it on every replica (through the store) and drops its values. Idle
   * expiry ends it for good only with a memory store; with a shared store another replica may still be
   * serving it (its requests went there), so it is only closed here and may be rebuilt from its id.
   */
  async drop(session: Session, how: Leaving = "deleted"): Promise<void> {
    const state = this.gateway.state;
    if (how === "deleted" || (how === "expired" && !state.shared)) {
      state.end(session.id).catch((err: Error) =>
        this.gateway.logger.warn("the end of a session could not reach the state store yet", {
          session: session.digest,
          error: err.message,
        }),
      );
      if (how === "deleted" && this.gateway.capture) void this.gateway.handles.forget(session.stateOwner);
    }
    await this.gateway.closeSession(session);
  }

  async close(): Promise<void> {
    clearInterval(this.sweep);
    const mine = [...this.gateway.sessions.values()].filter((s) => s.kind === "session");
    await Promise.all(mine.map((s) => this.drop(s, "shutdown")));
  }

  private newId(params: Record<string, unknown>, caller: Caller, how: OpenHow): string {
    const secret = this.options.sessionSecret;
    if (!secret || how.stateless) return randomUUID();
    const subject = subjectDigest(caller.principal, secret);
    const requested = String(params.protocolVersion ?? "");
    const seed: SessionSeed = {
      q: caller.query,
      v: SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION,
      c: (params.capabilities as Record<string, unknown>) ?? {},
      i: (params.clientInfo as SessionSeed["i"]) ?? { name: "unknown", version: "0" },
      b: caller.binding,
      ...(subject ? { s: subject } : {}),
      // The wall clock, as the state store records ends by (not the gateway's, which tests may move).
      t: Date.now(),
    };
    return signSessionId(seed, secret);
  }

  private rebuild(
    caller: Caller,
    id: string,
    seed: SessionSeed,
    connect: Connect<SessionTransport>,
  ): Promise<Session | WireError> {
    return this.open(
      caller,
      { id, replay: { protocolVersion: seed.v, capabilities: seed.c, clientInfo: seed.i } },
      connect,
    );
  }

  private expire(): void {
    const cutoff = this.gateway.now() - this.options.sessionIdleMs;
    for (const s of [...this.gateway.sessions.values()]) {
      if (s.kind !== "session" || s.oneRequest || s.lastSeen >= cutoff || s.via?.holding) continue;
      this.gateway.logger.info("session expired", { session: s.digest });
      void this.drop(s, "expired");
    }
  }
}

/** A toolset not enabled, as the log says it: why, and the members that match nothing (as list_server_toolsets names them). */
function notEnabled(u: Unavailable): string {
  return `${u.name}: ${u.reason}${u.missing.length ? ` ${u.missing.join(", ")}` : ""}`;
}
