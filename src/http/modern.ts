/**
 * @module 2026-07-28 requests on the MCP path. No session: each request carries its client in `_meta`, and its
 * selection in the URL. Requests with the same selection and the same credential values are served by one
 * context (a session without a transport: its resolution, instances and captured values), kept while used
 * and closed when idle; a per-session upstream of a caller with no credentials gets a context per request.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import { checkParamHeaders, checkStandardHeaders, scanParamHeaders } from "../modern/headers.js";
import type { Envelope } from "../modern/meta.js";
import { requestDigest, stateRefusal } from "../modern/request-state.js";
import type { WireRefusal } from "../modern/wire.js";
import { modernClient } from "../proxy/clients.js";
import type { Gateway } from "../proxy/gateway.js";
import { bindingOf, credentialsOf } from "../proxy/instances.js";
import type { Session } from "../proxy/session.js";
import { TooManyInstances } from "../upstream/pool.js";
import { Exchange } from "./exchange.js";
import { sendRpcError } from "./replies.js";
import { sessionDigest } from "./sessions.js";

type Request = { id: RequestId; method: string; params?: Record<string, unknown> };

export interface ModernOptions {
  /** A context unused this long is closed (its instances released, its captured values gone). */
  readonly idleMs: number;
  /** Contexts kept at once; past it the least recently used idle one is closed. */
  readonly maxContexts: number;
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
  ): Promise<void> {
    const bad = checkStandardHeaders(req.headers, m);
    if (bad) return sendRefusal(res, bad, m.id);
    const selected = this.gateway.select(query);
    if (!selected.ok) return sendRpcError(res, 400, -32602, `Bad selection: ${selected.error}`, {}, m.id);
    let context: Context;
    let ephemeral: boolean;
    const parked = this.parked(selected.selection, req, m);
    if (parked === "refused") return sendRefusal(res, stateRefusal(), m.id);
    try {
      ({ context, ephemeral } = parked ?? (await this.context(selected.selection, req)));
    } catch (err) {
      if (!(err instanceof TooManyInstances)) throw err;
      return sendRpcError(
        res,
        503,
        -32000,
        `Service Unavailable: ${err.message}`,
        { "retry-after": "30" },
        m.id,
      );
    }
    const session = context.session;
    if (m.method === "tools/call") {
      const route = session.resolution.tool.get(String(m.params?.name));
      const scan = route ? paramHeadersOf(route.definition) : undefined;
      const mismatch = scan?.ok
        ? checkParamHeaders(req.headers, scan.params, m.params?.arguments)
        : undefined;
      if (mismatch) return sendRefusal(res, mismatch, m.id);
    }
    const exchange = new Exchange(res, m.id);
    const rid = req.headers["x-request-id"];
    context.busy++;
    try {
      await session.run(
        m,
        modernClient(envelope),
        exchange,
        typeof rid === "string" ? rid : undefined,
        exchange.controller.signal,
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
  private parked(selection: Parameters<Gateway["open"]>[0], req: IncomingMessage, m: Request) {
    const token = m.params?.requestState;
    if (token === undefined) return undefined;
    const owner = bindingOf(
      credentialsOf(this.gateway.catalog, this.gateway.upstreamsOf(selection), req.headers),
    );
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

  /** The context of a selection and the request's credential values (made on first use). */
  private async context(selection: Parameters<Gateway["open"]>[0], req: IncomingMessage) {
    const catalog = this.gateway.catalog;
    const upstreams = this.gateway.upstreamsOf(selection);
    const credentials = credentialsOf(catalog, upstreams, req.headers);
    const owner = bindingOf(credentials);
    const anonymous = Object.keys(credentials.values).length === 0;
    const ephemeral =
      anonymous && upstreams.some((u) => catalog.upstreams.get(u)?.isolation === "per-session");
    const key = `${selection.key}\u0000${owner}`;
    const open = async (): Promise<Context> => {
      const sessionKey = ephemeral ? randomUUID() : `2026-07-28\u0000${key}`;
      const session = await this.gateway.open(
        selection,
        req.headers,
        sessionKey,
        sessionDigest(sessionKey),
        owner,
      );
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
