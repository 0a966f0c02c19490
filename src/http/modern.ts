/**
 * @module 2026-07-28 requests on the MCP path. No session: each request carries its client in `_meta`, and its
 * selection in the URL. Requests with the same selection and the same credential values are served by one
 * context (a session without a transport: its resolution, instances and captured values), kept while used
 * and closed when idle; a per-session upstream of a caller with no credentials gets a context per request.
 */
import { createHash, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import { accessKey } from "../access.js";
import { identityKey } from "../auth/requirements.js";
import type { Principal } from "../auth/types.js";
import { checkParamHeaders, checkStandardHeaders, scanParamHeaders } from "../modern/headers.js";
import type { Envelope } from "../modern/meta.js";
import { requestDigest, stateRefusal } from "../modern/request-state.js";
import type { WireRefusal } from "../modern/wire.js";
import { profileKey, profileOf } from "../proxy/client-profiles.js";
import { modernClient } from "../proxy/clients.js";
import type { Gateway } from "../proxy/gateway.js";
import { BEARER_OWNER } from "../proxy/handles.js";
import { bindingOf, type Credentials, credentialsOf } from "../proxy/instances.js";
import type { Session } from "../proxy/session.js";
import { TooManyInstances } from "../upstream/pool.js";
import { Exchange } from "./exchange.js";
import { sendRpcError } from "./replies.js";
import { sessionDigest } from "./session-entry.js";
import { refusalOf, type SessionLimits } from "./session-limits.js";

type Request = { id: RequestId; method: string; params?: Record<string, unknown> };

export interface ModernOptions {
  /** A context unused this long is closed (its instances released; captured values stay with their owner). */
  readonly idleMs: number;
  /** Contexts kept at once; past it the least recently used idle one is closed. */
  readonly maxContexts: number;
  /**
   * The handler's session limits (SPEC §7.6), applied per context: instance slots and the start rate when a
   * context opens, requests in flight, bounded output per response. None: unbounded.
   */
  readonly limits?: SessionLimits;
}

interface Context {
  readonly session: Session;
  lastUsed: number;
  busy: number;
}

/** The `x-mcp-header` parameters of a tool definition, scanned once per definition (they are frozen). */
const scanned = new WeakMap<object, ReturnType<typeof scanParamHeaders>>();
function paramHeadersOf(definition: { readonly inputSchema?: unknown }): ReturnType<typeof scanParamHeaders> {
  let scan = scanned.get(definition);
  if (!scan) {
    scan = scanParamHeaders(definition.inputSchema);
    scanned.set(definition, scan);
  }
  return scan;
}

/**
 * Whose a context is: a digest of the request's credential values and, with `auth:`, of its identity (SPEC
 * §11.3), so two subjects never share a context, its handles or its request states.
 */
function ownerOf(credentials: Credentials, principal: Principal | undefined): string {
  const binding = bindingOf(credentials);
  if (!principal) return binding;
  return createHash("sha256")
    .update(`toolpacks context owner\0${binding}\0${identityKey(principal)}`)
    .digest("base64url");
}

function sendRefusal(res: ServerResponse, refusal: WireRefusal, id: RequestId | null): void {
  sendRpcError(
    res,
    refusal.status,
    refusal.code,
    refusal.message,
    {},
    id as string | number | null,
    refusal.data,
  );
}

export class ModernEndpoint {
  private readonly contexts = new Map<string, Context>();
  private readonly opening = new Map<string, Promise<Context>>();
  /** Contexts made for one request (per-session upstreams, no credentials): kept while a bridge parks a call. */
  private readonly ephemerals = new Map<Session, Context>();
  private readonly sweep: NodeJS.Timeout;

  constructor(
    private readonly gateway: Gateway,
    private readonly options: ModernOptions,
  ) {
    this.sweep = setInterval(() => this.expire(), Math.min(options.idleMs, 60_000));
    this.sweep.unref();
    gateway.bridges.onRelease = (holder) => {
      const c = this.ephemerals.get(holder as Session);
      if (c) this.release(c);
    };
  }

  get size(): number {
    return this.contexts.size;
  }

  async serve(
    req: IncomingMessage,
    res: ServerResponse,
    query: string,
    m: Request,
    envelope: Envelope,
    principal?: Principal,
  ): Promise<void> {
    const bad = checkStandardHeaders(req.headers, m);
    if (bad) return sendRefusal(res, bad, m.id);
    const profile = profileOf(this.gateway.catalog, envelope.clientInfo, envelope.clientCapabilities);
    const selected = this.gateway.select(query, principal, profile);
    if (!selected.ok) return sendRpcError(res, 400, -32602, `Bad selection: ${selected.error}`, {}, m.id);
    let context: Context;
    let ephemeral: boolean;
    const parked = this.parked(selected.selection, req, m, principal);
    if (parked === "refused") return sendRefusal(res, stateRefusal(), m.id);
    try {
      ({ context, ephemeral } = parked ?? (await this.context(selected.selection, req, principal)));
    } catch (err) {
      if (!(err instanceof TooManyInstances)) throw err;
      const r = refusalOf(err);
      return sendRpcError(res, r.status, r.code, r.message, r.headers, m.id);
    }
    const session = context.session;
    const bounds = this.options.limits?.transport(session.digest);
    if (bounds?.maxInFlight !== undefined && context.busy >= bounds.maxInFlight) {
      if (ephemeral) this.release(context);
      const message = `Too Many Requests: ${context.busy} requests with this selection and these credentials are in flight and at most ${bounds.maxInFlight} may be (limits.requests_per_session); wait for their answers`;
      return sendRpcError(res, 429, -32000, message, { "retry-after": "1" }, m.id);
    }
    if (m.method === "tools/call") {
      const route = session.resolution.tool.get(String(m.params?.name));
      const scan = route ? paramHeadersOf(route.definition) : undefined;
      const mismatch = scan?.ok
        ? checkParamHeaders(req.headers, scan.params, m.params?.arguments)
        : undefined;
      if (mismatch) return sendRefusal(res, mismatch, m.id);
    }
    const exchange = new Exchange(res, m.id, bounds);
    const rid = req.headers["x-request-id"];
    context.busy++;
    try {
      await session.run(
        m,
        modernClient(envelope),
        exchange,
        typeof rid === "string" ? rid : undefined,
        exchange.controller.signal,
        req.headers,
      );
    } finally {
      context.busy--;
      context.lastUsed = this.gateway.now();
      if (ephemeral) this.release(context);
    }
  }

  /** An ephemeral context goes once no request runs on it and no bridge parks a call on its instances. */
  private release(c: Context): void {
    if (c.busy > 0 || this.gateway.bridges.holds(c.session)) return;
    this.ephemerals.delete(c.session);
    void this.gateway.closeSession(c.session);
  }

  /**
   * A retry (its request carries a requestState): one that names a call parked on this replica is served by the
   * context that runs that call, whichever context its selection and credentials would give today. One whose
   * state does not open for this caller and request, or names no call parked here (it expired, was used, or
   * was made on another replica), is refused at once: nothing is started for it. A pass-through state (a
   * 2026-07-28 upstream's, wrapped) goes the ordinary way.
   */
  private parked(
    selection: Parameters<Gateway["open"]>[0],
    req: IncomingMessage,
    m: Request,
    principal: Principal | undefined,
  ) {
    const token = m.params?.requestState;
    if (token === undefined) return undefined;
    const credentials = credentialsOf(this.gateway.catalog, this.gateway.upstreamsOf(selection), req.headers);
    const owner = ownerOf(credentials, principal);
    const opened =
      typeof token === "string"
        ? this.gateway.requestStates.open(token, { owner, request: requestDigest(m.method, m.params) })
        : undefined;
    if (opened?.ok && opened.state.inner !== undefined) return undefined;
    const holder = opened?.ok ? this.gateway.bridges.get(opened.state.bridge)?.holder : undefined;
    const context =
      (holder && this.ephemerals.get(holder as Session)) ??
      (holder && [...this.contexts.values()].find((c) => c.session === holder));
    if (!context) {
      this.gateway.logger.debug("requestState refused", {
        why: opened?.ok ? "no such call parked here" : (opened?.reason ?? "not a string"),
      });
      return "refused" as const;
    }
    return { context, ephemeral: this.ephemerals.has(context.session) };
  }

  /** The context of a selection, the request's credential values and its identity (made on first use). */
  private async context(
    selection: Parameters<Gateway["open"]>[0],
    req: IncomingMessage,
    principal: Principal | undefined,
  ) {
    const catalog = this.gateway.catalog;
    const upstreams = this.gateway.upstreamsOf(selection);
    const credentials = credentialsOf(catalog, upstreams, req.headers);
    const owner = ownerOf(credentials, principal);
    const anonymous = Object.keys(credentials.values).length === 0;
    const ephemeral =
      anonymous && upstreams.some((u) => catalog.upstreams.get(u)?.isolation === "per-session");
    const key = `${accessKey(selection)}\u0000${owner}\u0000${profileKey(selection)}`;
    const open = async (): Promise<Context> => {
      const sessionKey = ephemeral ? randomUUID() : `2026-07-28\u0000${key}`;
      // Captured values belong to the credential values and identity (any selection, any replica); callers
      // with neither get bearer handles (SPEC §8.5).
      const stateOwner = anonymous && !principal ? BEARER_OWNER : this.gateway.handles.credentialOwner(owner);
      const limits = this.options.limits;
      const client = limits?.clientOf(req, principal) ?? "";
      const slots = limits ? await limits.reserve(selection, req.headers, sessionKey, client) : undefined;
      const session = await this.gateway
        .open(selection, req.headers, sessionKey, sessionDigest(sessionKey), principal, owner, stateOwner)
        .finally(() => slots?.());
      return { session, lastUsed: this.gateway.now(), busy: 0 };
    };
    if (ephemeral) {
      const c = await open();
      this.ephemerals.set(c.session, c);
      return { context: c, ephemeral };
    }
    const known = this.contexts.get(key);
    if (known && this.gateway.sessions.has(known.session)) {
      this.contexts.delete(key);
      this.contexts.set(key, known);
      return { context: known, ephemeral };
    }
    let p = this.opening.get(key);
    if (!p) {
      p = open()
        .then((c) => {
          this.contexts.set(key, c);
          this.evict();
          return c;
        })
        .finally(() => this.opening.delete(key));
      this.opening.set(key, p);
    }
    return { context: await p, ephemeral };
  }

  /** Past the bound, the least recently used idle contexts are closed. */
  private evict(): void {
    for (const [key, c] of this.contexts) {
      if (this.contexts.size <= this.options.maxContexts) return;
      if (c.busy > 0) continue;
      this.contexts.delete(key);
      void this.gateway.closeSession(c.session);
    }
  }

  private expire(): void {
    const cutoff = this.gateway.now() - this.options.idleMs;
    for (const [key, c] of this.contexts) {
      if (c.busy > 0 || c.lastUsed >= cutoff) continue;
      this.contexts.delete(key);
      void this.gateway.closeSession(c.session);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweep);
    const all = [...this.contexts.values(), ...this.ephemerals.values()];
    this.contexts.clear();
    this.ephemerals.clear();
    await Promise.all(all.map((c) => this.gateway.closeSession(c.session)));
  }
}
