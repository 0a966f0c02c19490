/** @module The session table: open, find (or rebuild from a signed id), bind, expire and close HTTP sessions. */
import { createHash, randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "../protocol.js";
import type { Gateway } from "../proxy/gateway.js";
import { bindingOf, credentialsOf } from "../proxy/instances.js";
import type { Session } from "../proxy/session.js";
import { TooManyInstances } from "../upstream/pool.js";
import { type SessionSeed, signSessionId, verifySessionId } from "./session-id.js";
import { HttpSessionTransport } from "./session-transport.js";

export interface Entry {
  readonly session: Session;
  readonly transport: HttpSessionTransport;
  /** The digest of the credential values the session was opened with: every request must carry the same. */
  readonly binding: string;
}

/** Why a session could not be opened or found: an HTTP status and a JSON-RPC error. */
export interface Refusal {
  readonly status: number;
  readonly code: number;
  readonly message: string;
  readonly headers?: Record<string, string>;
}

export interface TableOptions {
  readonly sessionIdleMs: number;
  /** With a secret shared by replicas, ids are signed seeds any replica can rebuild a session from. */
  readonly sessionSecret?: string;
}

export function isRefusal(x: Entry | Refusal): x is Refusal {
  return "status" in x;
}

/** A session id is a bearer of its session: logs show a short digest of it, never the id. */
export function sessionDigest(id: string): string {
  return createHash("sha256").update(id).digest("hex").slice(0, 12);
}

const ENDED_REMEMBERED = 10_000;

export class SessionTable {
  private readonly entries = new Map<string, Entry>();
  private readonly rebuilding = new Map<string, Promise<Entry | Refusal>>();
  /** Sessions this replica ended (DELETE, expiry): a signed id of one is not rebuilt here. Bounded. */
  private readonly ended = new Set<string>();
  private readonly sweep: NodeJS.Timeout;

  constructor(
    private readonly gateway: Gateway,
    private readonly options: TableOptions,
  ) {
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
    } = {},
  ): Promise<Entry | Refusal> {
    const selected = this.gateway.select(query);
    if (!selected.ok) return { status: 400, code: -32602, message: `Bad selection: ${selected.error}` };
    const { selection } = selected;
    const credentials = credentialsOf(this.gateway.catalog, this.gateway.upstreamsOf(selection), req.headers);
    const binding = bindingOf(credentials);
    const id = init.id ?? this.newId(query, init.seed ?? {}, binding);
    const digest = sessionDigest(id);
    let session: Session;
    try {
      session = await this.gateway.open(selection, req.headers, id, digest);
    } catch (err) {
      if (!(err instanceof TooManyInstances)) throw err;
      return {
        status: 503,
        code: -32000,
        message: `Service Unavailable: ${err.message}`,
        headers: { "retry-after": "30" },
      };
    }
    const transport = new HttpSessionTransport(id, !init.stateless);
    const entry: Entry = { session, transport, binding };
    transport.onclosed = () => {
      if (this.entries.get(id)?.transport === transport) this.entries.delete(id);
      void this.gateway.closeSession(session);
    };
    transport.oninitializefailed = () => {
      this.gateway.logger.warn("initialize failed; session closed", { session: digest });
      void this.drop(id);
    };
    await session.connect(transport);
    if (init.params) await transport.replayInitialize(init.params);
    if (!init.stateless) this.entries.set(id, entry);
    const r = session.resolution;
    this.gateway.logger[init.stateless ? "debug" : "info"](init.id ? "session rebuilt" : "session opened", {
      session: init.stateless ? undefined : digest,
      active: r.active,
      tools: r.tools.length,
      ...(selection.unknown.length ? { unknown: selection.unknown } : {}),
      ...(r.unavailable.length ? { not_enabled: r.unavailable.map((u) => `${u.name}: ${u.reason}`) } : {}),
    });
    return entry;
  }

  /**
   * The session a request names: known here, or rebuilt from a signed id; 400/404 otherwise. A session serves
   * only requests that carry exactly the credential values it was opened with (POST, GET and DELETE alike):
   * a session id alone never lends someone's upstream instance, or their credentials, to another request.
   */
  async find(req: IncomingMessage): Promise<Entry | Refusal> {
    const id = req.headers["mcp-session-id"];
    if (typeof id !== "string" || !id) {
      return { status: 400, code: -32000, message: "Bad Request: Mcp-Session-Id header is required" };
    }
    const version = req.headers["mcp-protocol-version"];
    if (typeof version === "string" && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      return { status: 400, code: -32000, message: `Bad Request: unsupported protocol version ${version}` };
    }
    let entry: Entry | Refusal | undefined = this.entries.get(id);
    if (!entry && this.options.sessionSecret && !this.ended.has(id)) {
      const seed = verifySessionId(id, this.options.sessionSecret);
      if (seed && seed.b === this.bindingOfRequest(seed.q, req)) {
        let p = this.rebuilding.get(id);
        if (!p) {
          p = this.rebuild(req, id, seed).finally(() => this.rebuilding.delete(id));
          this.rebuilding.set(id, p);
        }
        entry = await p;
      } else if (seed) return this.forbidden();
    }
    if (!entry) return { status: 404, code: -32001, message: "Session not found" };
    if (isRefusal(entry)) return entry;
    if (entry.binding !== this.bindingOfRequest(undefined, req, entry.session)) return this.forbidden();
    entry.session.lastSeen = this.gateway.now();
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
  private bindingOfRequest(query: string | undefined, req: IncomingMessage, session?: Session): string {
    let upstreams: string[] = [];
    if (session) upstreams = this.gateway.upstreamsOf(session.selection);
    else {
      const selected = this.gateway.select(query ?? "");
      if (selected.ok) upstreams = this.gateway.upstreamsOf(selected.selection);
    }
    return bindingOf(credentialsOf(this.gateway.catalog, upstreams, req.headers));
  }

  async drop(id: string): Promise<void> {
    const e = this.entries.get(id);
    if (!e) return;
    this.entries.delete(id);
    this.ended.add(id);
    if (this.ended.size > ENDED_REMEMBERED) this.ended.delete(this.ended.values().next().value as string);
    await this.gateway.closeSession(e.session);
  }

  async close(): Promise<void> {
    clearInterval(this.sweep);
    await Promise.all([...this.entries.keys()].map((id) => this.drop(id)));
  }

  private newId(query: string, params: Record<string, unknown>, binding: string): string {
    if (!this.options.sessionSecret) return randomUUID();
    const requested = String(params.protocolVersion ?? "");
    const seed: SessionSeed = {
      q: query,
      v: SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION,
      c: (params.capabilities as Record<string, unknown>) ?? {},
      i: (params.clientInfo as SessionSeed["i"]) ?? { name: "unknown", version: "0" },
      b: binding,
    };
    return signSessionId(seed, this.options.sessionSecret);
  }

  private rebuild(req: IncomingMessage, id: string, seed: SessionSeed): Promise<Entry | Refusal> {
    return this.open(req, seed.q, {
      id,
      params: { protocolVersion: seed.v, capabilities: seed.c, clientInfo: seed.i },
    });
  }

  private expire(): void {
    const cutoff = this.gateway.now() - this.options.sessionIdleMs;
    for (const [id, e] of this.entries) {
      if (e.session.lastSeen < cutoff && !e.transport.streaming) {
        this.gateway.logger.info("session expired", { session: e.session.digest });
        void this.drop(id);
      }
    }
  }
}
