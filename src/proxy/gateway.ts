/** @module The serving core shared by HTTP, stdio and embedding: catalog, upstream pool, resolutions, sessions. */
import { accessKey, resolutionKey, withAccess } from "../access.js";
import { AuditLog } from "../audit.js";
import type { Principal } from "../auth/types.js";
import { withoutCapture } from "../catalog/capture-off.js";
import type { UpstreamState } from "../catalog/inventory.js";
import type { Catalog, ClientProfile, Upstream } from "../catalog/types.js";
import type { Logger } from "../log.js";
import { Metrics } from "../metrics.js";
import { type RequestStateCodec, requestStateCodec } from "../modern/state-key.js";
import { resolveEverything, type ToolsetsReport, toolsetsReport } from "../report.js";
import { type Resolution, resolveWithRefresh } from "../resolve.js";
import type { Selection, SelectResult } from "../selection.js";
import { type InstanceRef, refLabel, sharedRef } from "../upstream/instance.js";
import { UpstreamPool } from "../upstream/pool.js";
import { wireOAuth } from "./authorized.js";
import { BridgeTable } from "./bridge.js";
import { fitted, profileKey, selectFor, selectionOptions } from "./client-profiles.js";
import type { GatewayOptions } from "./gateway-options.js";
import type { SessionAuthorization, SessionHost, UpstreamLink } from "./host.js";
import { type Credentials, cacheKey, reportRefs } from "./instances.js";
import { offersToolsetsTool, ownToolDefs, warnShadowed } from "./lists.js";
import { Registry, type SessionKind } from "./registry.js";
import { placeAfterReload, refsAfterReload } from "./reload-sessions.js";
import { ResolutionCache } from "./resolution-cache.js";
import { Session } from "./session.js";
import { gatewaySearchIndexes, type Serving, servingOf } from "./state-host.js";
import { builtIns } from "./tools/builtins.js";
import { ToolRegistries } from "./tools/registry.js";
import { Traffic, warnInFlight } from "./traffic.js";

/** Parsed selections kept per client profile (§ Gateway.parsed). */
const SELECTIONS_KEPT = 256;

/** What opening a session takes: all of it worked out by the door from one caller value. */
export interface Opening {
  readonly id: string;
  readonly kind: SessionKind;
  readonly client: string;
  readonly selection: Selection;
  /** The instance of each upstream of the selection (`instancesOf` the caller). */
  readonly refs: ReadonlyMap<string, InstanceRef>;
  readonly credentials: Credentials;
  /** Their digest, and who it is (`identityKey`): a later request must bring the same. */
  readonly binding: string;
  readonly identity: string | undefined;
  readonly principal: Principal | undefined;
  /** It serves one request (stateless). */
  readonly oneRequest?: boolean;
  /** A digest of the id, for logs. */
  readonly digest: string;
  /** What its 2026-07-28 request states are bound to (default: the digest). */
  readonly owner?: string;
  /** Whose captured values (default: the id's digest; null: none, SPEC §8.5). */
  readonly stateOwner?: string | null;
  /** Run before the client's first initialize is answered (a stdio session's profile, SPEC §14.5). */
  readonly initializing?: (params: Record<string, unknown>) => Promise<void>;
}

export class Gateway implements SessionHost {
  readonly pool: UpstreamPool;
  /** Every session of the process: 2025 sessions, 2026-07-28 contexts, sessions of one request. */
  readonly sessions = new Registry<Session>();
  readonly traffic: Traffic;
  readonly metrics = new Metrics();
  readonly serverInfo: { name: string; version: string };
  readonly capture: boolean;
  readonly state: Serving["state"];
  readonly handles: Serving["handles"];
  readonly tracing: Serving["tracing"];
  readonly audit: AuditLog;
  readonly cacheTtlMs: number;
  /** Parked calls; a session made for one request goes once it has none left and nothing runs on it. */
  readonly bridges = new BridgeTable(1024, (holder) => {
    const s = holder as Session;
    if (s.kind === "request" && s.busy === 0) void this.closeSession(s);
  });
  readonly requestStates: RequestStateCodec;
  readonly searchIndexes = gatewaySearchIndexes(this);
  /** The tools each resolution offers: its upstream tools and the built-ins this core was configured with. */
  readonly tools: ToolRegistries;
  readonly authorization?: SessionAuthorization;
  private readonly cache = new ResolutionCache();
  private selections: {
    catalog: Catalog | undefined;
    byProfile: Map<ClientProfile | undefined, Map<string, SelectResult>>;
  } = { catalog: undefined, byProfile: new Map() };
  private current: Catalog;

  constructor(
    catalog: Catalog,
    readonly options: GatewayOptions,
  ) {
    this.capture = options.capture ?? true;
    this.cacheTtlMs = options.cacheTtlMs ?? 60_000;
    this.requestStates = requestStateCodec(catalog, options.stateSecret, () => this.now());
    this.current = this.capture ? catalog : withoutCapture(catalog);
    this.serverInfo = { name: options.name, version: options.version };
    ({ state: this.state, handles: this.handles, tracing: this.tracing } = servingOf(catalog, options));
    this.traffic = new Traffic({
      users: (ref) => this.users(ref),
      upstream: (name) => this.catalog.upstreams.get(name),
      logger: options.logger,
      untied: (upstream, kind) => this.metrics.untied.inc({ upstream, kind }),
      oneClient: options.oneClient === true,
    });
    const oauth = options.oauth && wireOAuth(options.oauth, this);
    if (oauth) this.authorization = oauth.authorization;
    this.pool = new UpstreamPool(
      this.current,
      {
        clientName: options.name,
        clientVersion: options.version,
        logger: options.logger,
        auth: oauth?.auth,
        oneClient: options.oneClient === true,
        transport: options.upstreamTransport,
      },
      {
        onNotification: (ref, n) => this.traffic.notification(ref, n as never),
        onServerRequest: (ref, request, signal) => this.traffic.serverRequest(ref, request as never, signal),
        onRestart: (u) => this.metrics.restarts.inc({ upstream: u }),
        onListed: (u) => this.metrics.refreshes.inc({ upstream: u }),
        onLimited: (_ref, limit) => this.metrics.limited.inc({ limit }),
        onClosed: (ref) => {
          this.traffic.forgetInstance(ref);
          this.metrics.instanceGone(ref.upstream, ref.kind, ref.id);
        },
        onChange: (ref, state) => {
          this.metrics.instanceState(ref.upstream, ref.kind, ref.id, state.status === "ready");
          this.upstreamChanged(ref, state);
        },
      },
    );
    this.tools = new ToolRegistries(
      builtIns({
        toolsetsTool: options.toolsetsTool,
        capture: this.capture,
        report: (selection, resolution) => this.report(selection, resolution),
        handles: this.handles,
        indexes: this.searchIndexes,
      }),
    );
    warnInFlight(this.logger, this.current);
    this.audit = new AuditLog(this.current.audit, { logger: options.logger });
  }

  get logger(): Logger {
    return this.options.logger;
  }

  /** The catalog new sessions get; a reload swaps it in one step. */
  get catalog(): Catalog {
    return this.current;
  }

  now(): number {
    return (this.options.now ?? Date.now)();
  }

  link(ref: InstanceRef): UpstreamLink {
    return this.pool.connection(ref);
  }

  upstream(name: string): Upstream | undefined {
    return this.current.upstreams.get(name);
  }

  /** `profile`: the client's (client-profiles.ts), matched at initialize or per 2026-07-28 request. */
  select(query: string, principal?: Principal, profile?: ClientProfile): SelectResult {
    const r = this.parsed(query, profile);
    return r.ok ? { ok: true, selection: withAccess(this.catalog, r.selection, principal) } : r;
  }

  /**
   * The selection a query names for a profile, parsed once per catalog: a 2026-07-28 client sends its URL with
   * every request. Selections are frozen values; at most SELECTIONS_KEPT queries per profile are kept, the
   * oldest going first.
   */
  private parsed(query: string, profile: ClientProfile | undefined): SelectResult {
    const catalog = this.catalog;
    if (this.selections.catalog !== catalog) this.selections = { catalog, byProfile: new Map() };
    let kept = this.selections.byProfile.get(profile);
    if (!kept) {
      kept = new Map();
      this.selections.byProfile.set(profile, kept);
    }
    const hit = kept.get(query);
    if (hit) return hit;
    const r = selectFor(catalog, query, selectionOptions(this.options), profile);
    if (kept.size >= SELECTIONS_KEPT) kept.delete(kept.keys().next().value as string);
    kept.set(query, r);
    return r;
  }

  /** The upstreams a selection needs. */
  upstreamsOf(selection: Selection): string[] {
    return [...new Set(selection.active.flatMap((n) => this.catalog.toolset.get(n)?.upstreams ?? []))];
  }

  /** The sessions that use an instance. */
  private users(ref: InstanceRef): Session[] {
    return this.sessions.users(ref);
  }

  /**
   * The resolution of a selection through these instances: starts the upstreams it needs (only those), applies
   * the gate, and caches the result. With `restart: false` (a report), an upstream that failed is shown as down.
   */
  resolve(selection: Selection, refs: ReadonlyMap<string, InstanceRef>, restart = true): Promise<Resolution> {
    const key = cacheKey(resolutionKey(selection), refs);
    const keep = ![...refs.values()].some((r) => r.kind === "session");
    return this.cache
      .get(key, restart, () => this.compute(selection, refs, restart), keep)
      .then((r) => fitted(this, r, selection));
  }

  private async compute(
    selection: Selection,
    refs: ReadonlyMap<string, InstanceRef>,
    restart: boolean,
  ): Promise<Resolution> {
    const catalog = this.catalog;
    const inventory = await this.pool.ensure(this.upstreamsOf(selection), refs, restart);
    const { resolution } = await resolveWithRefresh(catalog, selection, inventory, (u) =>
      this.pool.refresh(refs.get(u) ?? sharedRef(u)),
    );
    for (const u of resolution.unavailable) {
      this.metrics.refusals.inc({ toolset: u.name, reason: u.reason });
      this.logger.debug("toolset not enabled", { toolset: u.name, reason: u.reason, detail: u.detail });
    }
    warnShadowed(this.logger, resolution);
    return resolution;
  }

  /**
   * Opens a session on the instances the door chose: holds them, resolves, registers it. A failure leaves nothing
   * held or registered.
   */
  async open(o: Opening): Promise<Session> {
    const acquired: InstanceRef[] = [];
    try {
      for (const ref of o.refs.values()) {
        this.pool.acquire(ref);
        acquired.push(ref);
      }
      const resolution = await this.resolve(o.selection, o.refs);
      const session = new Session(this, {
        id: o.id,
        kind: o.kind,
        client: o.client,
        selection: o.selection,
        resolution,
        refs: o.refs,
        digest: o.digest,
        sessionKey: o.id,
        credentials: o.credentials,
        binding: o.binding,
        identity: o.identity,
        principal: o.principal,
        ...(o.oneRequest ? { oneRequest: true } : {}),
        ...(o.owner !== undefined ? { owner: o.owner } : {}),
        ...(o.stateOwner !== undefined ? { stateOwner: o.stateOwner } : {}),
        ...(o.initializing ? { initializing: o.initializing } : {}),
      });
      this.sessions.add(session);
      this.metrics.sessionOpened(o.selection.key);
      return session;
    } catch (err) {
      for (const ref of acquired) this.pool.release(ref);
      throw err;
    }
  }

  /**
   * Serves a live session another selection (the door's, for the same caller), on the instances the door chose
   * for it, before its client has seen a list: holds the new instances, resolves, swaps, lets go of the old. A
   * failure leaves the session as it was.
   */
  async refit(session: Session, selection: Selection, refs: ReadonlyMap<string, InstanceRef>): Promise<void> {
    const acquired: InstanceRef[] = [];
    let resolution: Resolution;
    try {
      for (const ref of refs.values()) {
        this.pool.acquire(ref);
        acquired.push(ref);
      }
      resolution = await this.resolve(selection, refs);
    } catch (err) {
      for (const ref of acquired) this.pool.release(ref);
      throw err;
    }
    if (!this.sessions.has(session)) {
      // It closed meanwhile (and let go of its instances): the new ones go too.
      for (const ref of acquired) this.pool.release(ref);
      return;
    }
    const before = session.refs;
    this.metrics.sessionClosed(session.selection.key);
    session.refit(selection, resolution, refs);
    // The registry indexes sessions by instance: list changes, authorizations, untied traffic and slots find it there.
    this.sessions.moved(session, before);
    this.metrics.sessionOpened(selection.key);
    for (const ref of before.values()) this.pool.release(ref);
  }

  async closeSession(session: Session): Promise<void> {
    if (!this.sessions.delete(session)) return;
    this.metrics.sessionClosed(session.selection.key);
    try {
      for (const [ref, uri] of this.traffic.forget(session)) {
        // Only on a connection that is up: closing a session must not start (or resurrect) an upstream.
        const upstream = this.pool.existing(ref);
        if (upstream?.state?.status === "ready")
          void upstream.request("resources/unsubscribe", { uri }).catch(() => {});
      }
      await session.close();
    } finally {
      for (const ref of session.refs.values()) this.pool.release(ref);
    }
  }

  /**
   * GET /toolsets: what a connection with these headers would get. Not a use: nothing restarts, and no
   * per-credential or per-session instance is started or reserved (one that already runs is read).
   */
  async reportFor(
    selection: Selection,
    credentials: Readonly<Record<string, string>> = {},
    identity?: string,
  ): Promise<ToolsetsReport> {
    const read = reportRefs(this.catalog, this.pool, this.upstreamsOf(selection), credentials, identity);
    try {
      return this.report(selection, await this.resolve(selection, read.refs, false));
    } finally {
      read.release();
    }
  }

  report(selection: Selection, resolution: Resolution): ToolsetsReport {
    return toolsetsReport(
      this.catalog,
      selection,
      resolution,
      ownToolDefs(resolution, this.offersToolsetsTool(resolution), this.capture),
      resolveEverything(this.catalog, this.pool.instances()), // pure: starts nothing
    );
  }

  offersToolsetsTool(resolution: Resolution): boolean {
    return this.options.toolsetsTool && offersToolsetsTool(resolution);
  }

  async close(): Promise<void> {
    this.bridges.close();
    await Promise.all([...this.sessions.values()].map((s) => this.closeSession(s)));
    await this.pool.close();
    await this.audit.end();
  }

  /**
   * Swaps in a new catalog (already validated): new sessions get it at once; live sessions keep their selection
   * and are placed on the instances the new config gives them (or ended when it cannot say), resolved again,
   * and told if what they see changed.
   */
  async reload(catalog: Catalog): Promise<void> {
    this.current = this.capture ? catalog : withoutCapture(catalog);
    warnInFlight(this.logger, this.current);
    this.audit.configure(this.current.audit);
    this.cache.clear();
    await this.pool.setCatalog(this.current);
    await Promise.all([...this.sessions.values()].map((s) => placeAfterReload(this, s)));
  }

  /** Called by placeAfterReload: the refs a live session should use now (undefined: it cannot be told, or
   * what its principal may use changed: a new initialize gets the new lists). */
  refsAfterReload(session: Session): Map<string, InstanceRef> | undefined {
    const access = withAccess(this.catalog, session.selection, session.principal);
    if (accessKey(access) !== accessKey(session.selection)) return undefined;
    return refsAfterReload(this.catalog, this.upstreamsOf(session.selection), session);
  }

  /** An instance's lists or availability changed: cached resolutions through it go; its sessions resolve again. */
  private upstreamChanged(ref: InstanceRef, state: UpstreamState): void {
    this.cache.dropUpstream(ref.upstream, (name) => this.catalog.toolset.get(name)?.upstreams ?? []);
    if (state.status !== "ready") return;
    const groups = new Map<string, Session[]>();
    for (const s of this.users(ref)) {
      const k = `${cacheKey(resolutionKey(s.selection), s.refs)}\u0000${profileKey(s.selection)}`;
      groups.set(k, [...(groups.get(k) ?? []), s]);
    }
    for (const group of groups.values()) {
      const first = group[0]!;
      this.resolve(first.selection, first.refs).then(
        (resolution) => {
          for (const s of group) if (this.sessions.has(s)) s.update(resolution);
        },
        (err: Error) =>
          this.logger.warn("re-resolving sessions failed", {
            upstream: ref.upstream,
            instance: refLabel(ref),
            error: err.message,
          }),
      );
    }
  }
}
