/**
 * @module The one door into the serving core, and the small interface the edges (HTTP, stdio, embedding) see of it.
 * Every request, of either era and over either transport, is identified here once (one caller value), checked
 * against one set of limits with one refusal shape (the error table's `WireError`: code, message, HTTP status,
 * headers), and handed to the session that serves it. The edges never see the gateway.
 */

import type { AuditLog } from "../audit.js";
import type { Principal } from "../auth/types.js";
import type { Limits } from "../catalog/limits.js";
import type { Catalog, ClientProfile } from "../catalog/types.js";
import type { ConsoleSource } from "../console/source.js";
import type { Logger } from "../log.js";
import type { Envelope } from "../modern/meta.js";
import { clientQuery, profileOf, profileOfInit } from "../proxy/client-profiles.js";
import { Gateway } from "../proxy/gateway.js";
import type { GatewayOptions } from "../proxy/gateway-options.js";
import type { Session } from "../proxy/session.js";
import type { SessionTransport } from "../proxy/transport.js";
import type { ToolsetsReport } from "../report.js";
import type { Selection, SelectResult } from "../selection.js";
import { errors, WireError } from "../wire/errors.js";
import { Admission } from "./admission.js";
import type { Arrival, Connect, Headers } from "./arrival.js";
import { type Caller, callerOf, type Era } from "./caller.js";
import { type TrustedProxies, trustedProxies } from "./client-key.js";
import { consoleSource } from "./console-source.js";
import { Contexts, type Served } from "./contexts.js";
import type { FdGauge } from "./fd-headroom.js";
import { Identity } from "./identity.js";
import { LegacySessions } from "./sessions.js";

/** A selection asked for: a URL's query, with the profile of the client that asks (if one matches). */
interface Asked {
  readonly query: string;
  readonly profile?: ClientProfile | undefined;
}

export type { Arrival, Connect } from "./arrival.js";
export type { Served } from "./contexts.js";

/** What an edge does with a session: hand it messages, run a 2026-07-28 request on it, name it. */
export type SessionPort = Pick<Session, "id" | "digest" | "receive" | "run" | "inUse" | "toolDefinition">;

export interface FrontOptions {
  /** Where MCP is served (the metadata path names it). */
  readonly path: string;
  /** Idle sessions and contexts are closed after this long. */
  readonly sessionIdleMs: number;
  /** Shared by replicas: session ids are signed and any replica can rebuild a session from one. */
  readonly sessionSecret?: string | undefined;
  /** Limits that override the config's `limits:` (serve or library options). */
  readonly limits?: Partial<Limits> | undefined;
  /** Proxies (addresses or ADDRESS/PREFIX) whose X-Forwarded-For names the client, for per-client limits. */
  readonly trustedProxies?: readonly string[] | undefined;
  /** Open file descriptors and their limit, for the headroom check (default: this process's, from /proc). */
  readonly fds?: FdGauge | undefined;
}

/** The door. */
export class Front {
  private readonly identity: Identity;
  private readonly admission: Admission<Session>;
  private readonly sessions: LegacySessions;
  private readonly contexts: Contexts;
  private readonly proxies: TrustedProxies;

  constructor(
    private readonly gateway: Gateway,
    options: FrontOptions,
  ) {
    this.proxies = trustedProxies(options.trustedProxies ?? []);
    this.identity = new Identity(
      gateway.logger,
      options.path,
      gateway.options.ignoreKeys,
      undefined,
      (limit) => gateway.metrics.limited.inc({ limit }),
    );
    this.admission = new Admission<Session>({
      registry: gateway.sessions,
      catalog: () => gateway.catalog,
      overrides: options.limits,
      logger: gateway.logger,
      limited: (limit) => gateway.metrics.limited.inc({ limit }),
      now: () => gateway.now(),
      evict: (s) => (s.kind === "session" ? this.sessions.drop(s, "expired") : gateway.closeSession(s)),
      isolated: (u) => gateway.pool.isolated(u),
      exists: (ref) => gateway.pool.existing(ref) !== undefined,
      closeInstance: (ref) => gateway.pool.closeNow(ref),
      parked: (client) => gateway.bridges.count(client),
      ...(options.fds ? { fds: options.fds } : {}),
    });
    // Calls parked for a retry count against their client under the same limits.
    gateway.bridges.refusal = (client) => this.admission.park(client);
    this.sessions = new LegacySessions(gateway, this.admission, options);
    this.contexts = new Contexts(gateway, this.admission, options.sessionIdleMs);
  }

  get logger(): Logger {
    return this.gateway.logger;
  }

  /** The limits in force now (the edge reads the batch and output bounds). */
  limits(): Limits {
    return this.admission.limits();
  }

  /** A limit an edge enforces was reached (output bounds): counted, and said at warn. */
  limitReached(limit: string, message: string, fields: Record<string, unknown>): void {
    this.gateway.metrics.limited.inc({ limit });
    this.gateway.logger.warn(message, fields);
  }

  // ── who is calling ─────────────────────────────────────────────────────────────────────────────────────

  /**
   * `auth:` is on. Without it there is nobody to authenticate: a request's path (2025 or 2026-07-28) then spends no
   * turn of the event loop awaiting `authenticate` to say so.
   */
  private get authOn(): boolean {
    return this.identity.on(this.gateway.catalog);
  }

  /** Authenticates an arrival (`query`: the selection whose scopes a 401 asks for): its principal, or the refusal. */
  authenticate(arrival: Arrival, query = arrival.query): Promise<Principal | undefined | WireError> {
    return this.identity.authenticate(this.gateway.catalog, arrival.headers, query);
  }

  /**
   * The principal of a valid `Authorization` value where a token is optional (the OAuth pages: the request's
   * header, or a token an administrator posted), else undefined.
   */
  identify(authorization: string | undefined): Promise<Principal | undefined> {
    return this.identity.identify(this.gateway.catalog, authorization);
  }

  isMetadataPath(path: string): boolean {
    return this.identity.isMetadataPath(this.gateway.catalog, path);
  }

  metadata(): unknown {
    return this.identity.metadata(this.gateway.catalog);
  }

  /**
   * The caller of an arrival with this principal, for a selection (the URL's, or a session's own): the one place
   * it is worked out. A URL that does not parse is refused.
   */
  private caller(
    era: Era,
    arrival: Arrival,
    principal: Principal | undefined,
    of: Asked | Session,
  ): Caller | WireError {
    const catalog = this.gateway.catalog;
    let selection: Selection;
    let query: string;
    if (!("selection" in of)) {
      const selected = this.select(of.query, principal, of.profile);
      if (!selected.ok) return errors.badSelection(selected.error);
      selection = selected.selection;
      query = of.query;
    } else {
      selection = of.selection;
      query = arrival.query;
    }
    return callerOf(catalog, {
      era,
      principal,
      selection,
      query,
      headers: arrival.headers,
      address: arrival.address,
      proxies: this.proxies,
      authenticated: this.identity.on(catalog),
      ipv6Prefix: this.admission.limits().ipv6Prefix,
    });
  }

  /** A URL's query → the selection this principal (and this client's profile) may have (SPEC §3, §11.4, §14). */
  select(query: string, principal?: Principal, profile?: ClientProfile): SelectResult {
    return this.gateway.select(query, principal, profile);
  }

  // ── 2025 sessions ───────────────────────────────────────────────────────────────────────────────────────

  /**
   * Opens a session for an initialize (`stateless`: for this one request, replaying `replay` unless it is the
   * initialize itself), its transport made by `connect`.
   */
  async open<T extends SessionTransport>(
    arrival: Arrival,
    initialize: { seed?: Record<string, unknown>; replay?: Record<string, unknown>; stateless?: boolean },
    connect: Connect<T>,
  ): Promise<{ session: SessionPort; transport: T } | WireError> {
    const principal = await this.authenticate(arrival);
    if (principal instanceof WireError) return principal;
    const stepUp = this.identity.stepUp(this.gateway.catalog, principal, arrival.query);
    if (stepUp) return stepUp;
    const profile = profileOfInit(this.gateway.catalog, initialize.seed ?? initialize.replay);
    const caller = this.caller("2025", arrival, principal, { query: arrival.query, profile });
    if (caller instanceof WireError) return caller;
    let transport: T | undefined;
    const opened = await this.sessions.open(caller, initialize, (s) => (transport = connect(s)));
    if (opened instanceof WireError) return opened;
    return { session: opened, transport: transport! };
  }

  /**
   * The session an arrival names (`Mcp-Session-Id`), checked against the caller (its credentials, identity and
   * grants); a signed id of another replica's is rebuilt here, its transport made by `connect`.
   */
  async find<T extends SessionTransport>(
    arrival: Arrival,
    connect: Connect<T>,
  ): Promise<{ session: SessionPort; transport: T } | WireError> {
    const principal = this.authOn ? await this.authenticate(arrival) : undefined;
    if (principal instanceof WireError) return principal;
    const id = header(arrival.headers, "mcp-session-id");
    const version = header(arrival.headers, "mcp-protocol-version");
    const found = await this.sessions.find(
      id,
      version,
      (of) =>
        this.caller(
          "2025",
          arrival,
          principal,
          "query" in of ? { query: of.query, profile: profileOfInit(this.gateway.catalog, of.init) } : of,
        ),
      connect,
    );
    if (found instanceof WireError) return found;
    const lacking =
      principal &&
      this.identity.stillMeets(this.gateway.catalog, principal, this.sessions.granted(found.session));
    if (lacking) return lacking;
    // The edge that connects a kind of transport is the one that finds its sessions again.
    return { session: found.session, transport: found.session.via as T };
  }

  /** A client's DELETE: the session ends here and, through the store, on every replica. */
  end(session: SessionPort): Promise<void> {
    return this.sessions.drop(session as Session, "deleted");
  }

  /** A session made for one request (stateless): it is closed with it. */
  done(session: SessionPort): void {
    void this.gateway.closeSession(session as Session);
  }

  /** Open 2025 sessions. */
  get sessionCount(): number {
    return this.sessions.size;
  }

  // ── 2026-07-28 requests ─────────────────────────────────────────────────────────────────────────────────

  /** The session that serves one 2026-07-28 request (a context, a parked call's, or one of its own). */
  async modern(
    arrival: Arrival,
    m: { readonly method: string; readonly params?: Record<string, unknown> },
    envelope: Envelope,
  ): Promise<(Served & { session: SessionPort; unknown: readonly string[] }) | WireError> {
    const principal = this.authOn ? await this.authenticate(arrival) : undefined;
    if (principal instanceof WireError) return principal;
    // Each request is its own initialize here: its principal narrows the URL's selection, step-up included.
    const stepUp = this.identity.stepUp(this.gateway.catalog, principal, arrival.query);
    if (stepUp) return stepUp;
    const profile = profileOf(this.gateway.catalog, envelope.clientInfo, envelope.clientCapabilities);
    const caller = this.caller("2026-07-28", arrival, principal, { query: arrival.query, profile });
    if (caller instanceof WireError) return caller;
    const served = await this.contexts.serve(caller, m);
    // The context is its toolsets', shared by every URL that gives them: the unknown names are this request's.
    return served instanceof WireError ? served : { ...served, unknown: caller.selection.unknown };
  }

  // ── stdio ───────────────────────────────────────────────────────────────────────────────────────────────

  /**
   * The one session of a stdio connection, on the transport `connect` makes: its client is whoever launched the
   * process (`--as` names it). Throws what cannot be served (a bad selection).
   */
  async stdio<T extends SessionTransport>(
    query: string,
    principal: Principal | undefined,
    connect: Connect<T>,
  ): Promise<{
    active: readonly string[];
    tools: number;
    unknown: readonly string[];
    forbidden?: readonly string[];
  }> {
    const arrival: Arrival = { query, headers: {}, address: "stdio" };
    const caller = this.caller("2025", arrival, principal, { query });
    if (caller instanceof WireError)
      throw new Error(`bad --toolsets selection: ${caller.message.replace(/^Bad selection: /, "")}`);
    // The session opens before its client's initialize (its upstreams start meanwhile); the initialize then says
    // who the client is, and a client with a profile is served the selection for it from its first list on.
    const initialized = (params: Record<string, unknown>): Caller | undefined => {
      const profile = profileOfInit(this.gateway.catalog, params);
      if (!profile) return undefined;
      const fitted = this.caller("2025", arrival, principal, { query, profile });
      return fitted instanceof WireError ? undefined : fitted;
    };
    const opened = await this.sessions.open(caller, { stdio: true, initialized }, connect);
    if (opened instanceof WireError) throw opened;
    const { selection, resolution } = opened;
    return {
      active: resolution.active,
      tools: resolution.tools.length,
      unknown: selection.unknown,
      ...(selection.forbidden?.length ? { forbidden: selection.forbidden } : {}),
    };
  }

  // ── reports ─────────────────────────────────────────────────────────────────────────────────────────────

  /**
   * GET /toolsets: what a connection with these headers and this token would get. Not a use: nothing restarts,
   * and no per-credential or per-session instance is started or reserved (one that already runs is read).
   */
  async report(arrival: Arrival): Promise<ToolsetsReport | { badSelection: string } | WireError> {
    const principal = await this.authenticate(arrival);
    if (principal instanceof WireError) return principal;
    const stepUp = this.identity.stepUp(this.gateway.catalog, principal, arrival.query);
    if (stepUp) return stepUp;
    // `?client=NAME` answers for that client's profile (SPEC §14.3).
    const asked = clientQuery(this.gateway.catalog, arrival.query);
    const selected = this.select(asked.query, principal, asked.profile);
    if (!selected.ok) return { badSelection: selected.error };
    const caller = this.caller("2025", arrival, principal, asked);
    if (caller instanceof WireError) return caller;
    try {
      return await this.gateway.reportFor(caller.selection, caller.credentials.values, caller.identity);
    } catch (err) {
      if (err instanceof WireError) return err;
      throw err;
    }
  }

  /** GET /metrics, for a caller `auth:` accepts. */
  async metrics(arrival: Arrival): Promise<{ contentType: string; text: string } | WireError> {
    const principal = await this.authenticate(arrival, "");
    if (principal instanceof WireError) return principal;
    const m = this.gateway.metrics;
    return { contentType: m.registry.contentType, text: await m.text() };
  }

  /** GET /healthz. */
  health(): { ok: true; name: string; sessions: number; store: string } {
    const g = this.gateway;
    return { ok: true, name: g.options.name, sessions: this.sessions.size, store: g.state.health() };
  }

  /** GET /readyz: ready when the state store is up. */
  ready(): { ready: boolean; store: string; reason?: string } {
    const state = this.gateway.state;
    const store = state.health();
    const ready = store === "up";
    return { ready, store, ...(ready ? {} : { reason: `state store ${state.description} is unavailable` }) };
  }

  get catalog(): Catalog {
    return this.gateway.catalog;
  }

  /** What the browser console reads (SPEC §17): the same reports a script gets from /toolsets and /metrics. */
  console(): ConsoleSource {
    return consoleSource(this.gateway);
  }

  /** The audit log (grant changes are written to it too, SPEC §11.5). */
  get audit(): AuditLog {
    return this.gateway.audit;
  }

  /** Which toolsets a URL would get, for a principal: building nothing, starting nothing (SPEC §8.4). */
  activeFor(
    url: string,
    principal?: Principal,
  ): { active: readonly string[]; unknown: readonly string[]; forbidden: readonly string[] } {
    const q = url.indexOf("?");
    const result = this.select(q < 0 ? "" : url.slice(q + 1), principal);
    if (!result.ok) return { active: [], unknown: [], forbidden: [] };
    const { active, unknown, forbidden = [] } = result.selection;
    return { active, unknown, forbidden };
  }

  /** Warms what a bare URL gets (its upstreams spawned already): the first session finds it ready. */
  warm(): void {
    const warm = this.select("");
    if (warm.ok) void this.gateway.resolve(warm.selection, new Map()).catch(() => {});
  }

  /** Swaps in a new catalog (validated): new sessions get it at once; live ones are placed again (SPEC §7.4). */
  reload(catalog: Catalog): Promise<void> {
    return this.gateway.reload(catalog);
  }

  /** Ends every session and context, then the serving core (upstream instances, the audit log). */
  async close(): Promise<void> {
    await this.contexts.close();
    await this.sessions.close();
    this.identity.close();
    await this.gateway.close();
  }
}

/** The serving core for a compiled catalog, behind its door. Nothing starts until a request needs it. */
export function createFront(catalog: Catalog, core: GatewayOptions, options: FrontOptions): Front {
  return new Front(new Gateway(catalog, core), options);
}

function header(headers: Headers, name: string): string | undefined {
  const v = headers[name];
  return typeof v === "string" ? v : undefined;
}
