/** @module The session table: open, find (or rebuild from a signed id), bind, expire and close HTTP sessions. */
import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { identityKey } from "../auth/requirements.js";
import type { Principal } from "../auth/types.js";
import type { ClientProfile } from "../catalog/types.js";
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "../protocol.js";
import { profileOfInit, sessionLog } from "../proxy/client-profiles.js";
import type { Gateway } from "../proxy/gateway.js";
import { bindingOf, credentialsOf } from "../proxy/instances.js";
import type { Session } from "../proxy/session.js";
import { TooManyInstances } from "../upstream/pool.js";
import {
  anotherIdentity,
  type Entry,
  isRefusal,
  type Refusal,
  sessionDigest,
  type TableOptions,
} from "./session-entry.js";
import { type SessionSeed, signSessionId, subjectDigest, verifySessionId } from "./session-id.js";
import { refusalOf, SessionLimits } from "./session-limits.js";
import { HttpSessionTransport } from "./session-transport.js";

/** Why a session leaves this replica's table: a client's DELETE, idle expiry, shutdown, or a DELETE elsewhere. */
type Leaving = "deleted" | "expired" | "shutdown" | "ended-elsewhere";

export class SessionTable {
  private readonly entries = new Map<string, Entry>();
  private readonly rebuilding = new Map<string, Promise<Entry | Refusal>>();
  private readonly sweep: NodeJS.Timeout;
  /** The session limits, shared with the 2026-07-28 endpoint (one start rate and one slot table per handler). */
  readonly limits: SessionLimits;

  constructor(
    private readonly gateway: Gateway,
    private readonly options: TableOptions,
  ) {
    this.limits = new SessionLimits(
      gateway,
      options.limits,
      (id) => this.entries.get(id)?.transport.idle ?? false,
      options.clientOf,
    );
    this.sweep = setInterval(() => this.expire(), Math.min(options.sessionIdleMs, 60_000));
    this.sweep.unref();
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * Opens a session for an initialize request at this URL. With `params`, the initialize is replayed
   * (rebuild, stateless); without, the caller hands the real initialize to the transport.
   */
  async open(
    req: IncomingMessage,
    query: string,
    init: {
      /** Replay this initialize (rebuild, stateless) instead of waiting for the client's. */
      params?: Record<string, unknown>;
      /** The client's own initialize params, sealed into a signed id. */
      seed?: Record<string, unknown>;
      id?: string;
      stateless?: boolean;
      /** Who opened it (its initialize's token); undefined without auth:. */
      principal?: Principal | undefined;
    } = {},
  ): Promise<Entry | Refusal> {
    const { principal } = init;
    const said = init.seed ?? init.params;
    const selected = this.gateway.select(query, principal, profileOfInit(this.gateway.catalog, said));
    if (!selected.ok) return { status: 400, code: -32602, message: `Bad selection: ${selected.error}` };
    const { selection } = selected;
    const credentials = credentialsOf(this.gateway.catalog, this.gateway.upstreamsOf(selection), req.headers);
    const binding = bindingOf(credentials);
    const id = init.id ?? this.newId(query, init.seed ?? {}, binding, principal);
    const digest = sessionDigest(id);
    const client = this.limits.clientOf(req, principal);
    const ticket = await this.limits.admit(client, (old) => this.drop(old));
    if ("status" in ticket) return ticket;
    let session: Session;
    try {
      const slots = await this.limits.instances(selection, req.headers, id, client);
      if (typeof slots !== "function") {
        ticket.release();
        return slots;
      }
      session = await this.gateway.open(selection, req.headers, id, digest, principal).finally(slots);
    } catch (err) {
      ticket.release();
      if (!(err instanceof TooManyInstances)) throw err;
      return refusalOf(err);
    }
    ticket.bind(id);
    const transport = new HttpSessionTransport(
      id,
      !init.stateless,
      this.limits.transport(init.stateless ? undefined : digest),
    );
    const entry: Entry = {
      session,
      transport,
      binding,
      client,
      subject: principal && identityKey(principal),
    };
    transport.onclosed = () => {
      if (this.entries.get(id)?.transport === transport) this.entries.delete(id);
      this.limits.forget(id);
      void this.gateway.closeSession(session);
      // In this process's memory a session's values cannot outlive it; in a shared store they stay for the
      // other replicas until a DELETE (drop) or their TTL.
      if (this.gateway.capture && !this.gateway.state.shared)
        void this.gateway.handles.forget(session.stateOwner);
    };
    transport.oninitializefailed = () => {
      this.gateway.logger.warn("initialize failed; session closed", { session: digest });
      void this.drop(id);
    };
    await session.connect(transport);
    if (init.params) await transport.replayInitialize(init.params);
    if (!init.stateless) this.entries.set(id, entry);
    const r = session.resolution;
    const told = sessionLog(this.gateway, selection, r, (said?.clientInfo as { name?: unknown })?.name);
    this.gateway.logger[init.stateless ? "debug" : "info"](init.id ? "session rebuilt" : "session opened", {
      session: init.stateless ? undefined : digest,
      active: r.active,
      tools: r.tools.length,
      ...(selection.unknown.length ? { unknown: selection.unknown } : {}),
      ...(r.unavailable.length ? { not_enabled: r.unavailable.map((u) => `${u.name}: ${u.reason}`) } : {}),
      ...told.fields,
    });
    if (told.warning) this.gateway.logger.warn(told.warning, { session: digest, ...told.fields });
    return entry;
  }

  /**
   * The session a request names: known here, or rebuilt from a signed id; 400/404 otherwise. A session serves
   * only requests that carry exactly the credential values it was opened with (POST, GET and DELETE alike):
   * a session id alone never lends someone's upstream instance, or their credentials, to another request.
   */
  async find(req: IncomingMessage, principal?: Principal): Promise<Entry | Refusal> {
    const id = req.headers["mcp-session-id"];
    if (typeof id !== "string" || !id) {
      return { status: 400, code: -32000, message: "Bad Request: Mcp-Session-Id header is required" };
    }
    const version = req.headers["mcp-protocol-version"];
    if (typeof version === "string" && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      return { status: 400, code: -32000, message: `Bad Request: unsupported protocol version ${version}` };
    }
    // Ended here or, through a shared store, on another replica: a local, synchronous lookup.
    if (this.gateway.state.isEnded(id)) {
      if (this.entries.has(id)) await this.drop(id, "ended-elsewhere");
      return { status: 404, code: -32001, message: "Session not found" };
    }
    let entry: Entry | Refusal | undefined = this.entries.get(id);
    if (!entry && this.options.sessionSecret) {
      const seed = verifySessionId(id, this.options.sessionSecret);
      const secret = this.options.sessionSecret;
      if (seed && seed.s !== subjectDigest(principal, secret)) return anotherIdentity();
      const said = seed && profileOfInit(this.gateway.catalog, { clientInfo: seed.i, capabilities: seed.c });
      if (seed && seed.b === this.bindingOfRequest(seed.q, req, principal, undefined, said)) {
        let p = this.rebuilding.get(id);
        if (!p) {
          p = this.rebuild(req, id, seed, principal).finally(() => this.rebuilding.delete(id));
          this.rebuilding.set(id, p);
        }
        entry = await p;
      } else if (seed) return this.forbidden();
    }
    if (!entry) return { status: 404, code: -32001, message: "Session not found" };
    if (isRefusal(entry)) return entry;
    if (entry.subject !== (principal && identityKey(principal))) return anotherIdentity();
    if (entry.binding !== this.bindingOfRequest(undefined, req, principal, entry.session))
      return this.forbidden();
    entry.session.lastSeen = this.gateway.now();
    this.limits.touch(id);
    return entry;
  }

  private forbidden(): Refusal {
    return {
      status: 403,
      code: -32000,
      message: "Forbidden: this request's credential headers differ from those its session was opened with",
    };
  }

  /** The binding digest of a request, for the upstreams of a session (or of a query's selection). */
  private bindingOfRequest(
    query: string | undefined,
    req: IncomingMessage,
    principal: Principal | undefined,
    session?: Session,
    profile?: ClientProfile,
  ): string {
    let upstreams: string[] = [];
    if (session) upstreams = this.gateway.upstreamsOf(session.selection);
    else {
      const selected = this.gateway.select(query ?? "", principal, profile);
      if (selected.ok) upstreams = this.gateway.upstreamsOf(selected.selection);
    }
    return bindingOf(credentialsOf(this.gateway.catalog, upstreams, req.headers));
  }

  /**
   * Closes a session here. A DELETE ends it on every replica (through the store) and drops its values. Idle
   * expiry ends it for good only with a memory store; with a shared store another replica may still be
   * serving it (its requests went there), so it is only closed here and may be rebuilt from its id.
   */
  async drop(id: string, how: Leaving = "deleted"): Promise<void> {
    const e = this.entries.get(id);
    const state = this.gateway.state;
    if (how === "deleted" || (how === "expired" && !state.shared)) {
      state.end(id).catch((err: Error) =>
        this.gateway.logger.warn("the end of a session could not reach the state store yet", {
          session: sessionDigest(id),
          error: err.message,
        }),
      );
      if (e && how === "deleted" && this.gateway.capture)
        void this.gateway.handles.forget(e.session.stateOwner);
    }
    if (!e) return;
    this.entries.delete(id);
    this.limits.forget(id);
    await this.gateway.closeSession(e.session);
  }

  async close(): Promise<void> {
    clearInterval(this.sweep);
    await Promise.all([...this.entries.keys()].map((id) => this.drop(id, "shutdown")));
  }

  private newId(
    query: string,
    params: Record<string, unknown>,
    binding: string,
    principal: Principal | undefined,
  ): string {
    if (!this.options.sessionSecret) return randomUUID();
    const subject = subjectDigest(principal, this.options.sessionSecret);
    const requested = String(params.protocolVersion ?? "");
    const seed: SessionSeed = {
      q: query,
      v: SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION,
      c: (params.capabilities as Record<string, unknown>) ?? {},
      i: (params.clientInfo as SessionSeed["i"]) ?? { name: "unknown", version: "0" },
      b: binding,
      ...(subject ? { s: subject } : {}),
    };
    return signSessionId(seed, this.options.sessionSecret);
  }

  private rebuild(
    req: IncomingMessage,
    id: string,
    seed: SessionSeed,
    principal: Principal | undefined,
  ): Promise<Entry | Refusal> {
    return this.open(req, seed.q, {
      id,
      principal,
      params: { protocolVersion: seed.v, capabilities: seed.c, clientInfo: seed.i },
    });
  }

  private expire(): void {
    const cutoff = this.gateway.now() - this.options.sessionIdleMs;
    for (const [id, e] of this.entries) {
      if (e.session.lastSeen < cutoff && !e.transport.streaming) {
        this.gateway.logger.info("session expired", { session: e.session.digest });
        void this.drop(id, "expired");
      }
    }
  }
}
