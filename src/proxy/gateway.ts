/** @module The serving core shared by HTTP, stdio and embedding: catalog, upstream pool, resolutions, sessions. */
import type { IncomingHttpHeaders } from "node:http";
import type { ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { UpstreamState } from "../catalog/inventory.js";
import type { Catalog } from "../catalog/types.js";
import type { Logger } from "../log.js";
import { Metrics } from "../metrics.js";
import { everythingSelection, type ToolsetsReport, toolsetsReport } from "../report.js";
import { type Resolution, resolve, resolveWithRefresh } from "../resolve.js";
import { type Selection, type SelectResult, select } from "../selection.js";
import { type Instance, instanceId, SHARED, UpstreamPool } from "../upstream/pool.js";
import { cacheKey, instancesOf } from "./instances.js";
import { Session } from "./session.js";
import { TOOLSETS_TOOL, toolsetsToolDef } from "./toolsets-tool.js";
import { Traffic } from "./traffic.js";

export interface GatewayOptions {
  readonly name: string;
  readonly version: string;
  /** What a URL naming nothing gets, in URL spelling. */
  readonly defaultSelection?: string;
  readonly ignoreKeys?: readonly string[];
  /** Offer list_server_toolsets (default true). */
  readonly toolsetsTool: boolean;
  readonly logger: Logger;
}

export class Gateway {
  readonly pool: UpstreamPool;
  private readonly cache = new Map<string, Resolution>();
  private readonly inflight = new Map<string, Promise<Resolution>>();
  readonly sessions = new Set<Session>();
  readonly traffic: Traffic;
  readonly metrics = new Metrics();
  private current: Catalog;
  /** Bumped by every reload. */
  private generation = 0;

  constructor(
    catalog: Catalog,
    readonly options: GatewayOptions,
  ) {
    this.current = catalog;
    this.traffic = new Traffic(
      (id) => [...this.sessions].filter((s) => s.resolution.upstreams.some((u) => s.instanceId(u) === id)),
      options.logger,
    );
    this.pool = new UpstreamPool(
      catalog,
      { clientName: options.name, clientVersion: options.version, logger: options.logger },
      {
        onNotification: (u, n) => this.traffic.notification(u, n),
        onRestart: (u) => this.metrics.restarts.inc({ upstream: u }),
        onClosed: (id) => {
          this.traffic.forgetInstance(id);
          const [upstream, key] = [id.slice(0, id.lastIndexOf("#")), id.slice(id.lastIndexOf("#") + 1)];
          this.metrics.upstreamUp.remove({ upstream, instance: key.split(":")[0]! });
        },
        onListed: (u) => this.metrics.refreshes.inc({ upstream: u }),
        onServerRequest: (u, request, signal) => this.traffic.serverRequest(u, request, signal),
      },
    );
    this.pool.onChange((upstream, state, key) => {
      this.metrics.upstreamUp.set(
        { upstream, instance: key.split(":")[0]! },
        state.status === "ready" ? 1 : 0,
      );
      this.upstreamChanged(upstream, state, key);
    });
  }

  get logger(): Logger {
    return this.options.logger;
  }

  /** The catalog new sessions get; a reload swaps it in one step. */
  get catalog(): Catalog {
    return this.current;
  }

  select(query: string): SelectResult {
    return select(this.catalog, query, {
      ...(this.options.ignoreKeys ? { ignoreKeys: this.options.ignoreKeys } : {}),
      ...(this.options.defaultSelection !== undefined
        ? { defaultSelection: this.options.defaultSelection }
        : {}),
    });
  }

  /** The upstreams a selection needs. */
  upstreamsOf(selection: Selection): string[] {
    return [...new Set(selection.active.flatMap((n) => this.catalog.toolset.get(n)?.upstreams ?? []))];
  }

  /**
   * Which connection of each upstream a session uses: the shared one, one per distinct forwarded credential
   * (`forward_headers`, `header_env`), or its own (`isolation: per-session`).
   */
  instancesFor(
    selection: Selection,
    headers: IncomingHttpHeaders = {},
    sessionId?: string,
  ): Map<string, Instance> {
    return instancesOf(this.catalog, this.upstreamsOf(selection), headers, sessionId);
  }

  /**
   * The shared resolution of a selection: starts the upstreams it needs (only those), applies the gate, and
   * caches the result. A cached resolution with a pack not enabled is recomputed (the upstream may be back).
   * With `restart: false` (a report), an upstream that failed is shown as down instead of being restarted.
   */
  resolve(
    selection: Selection,
    instances: ReadonlyMap<string, Instance> = new Map(),
    restart = true,
  ): Promise<Resolution> {
    const key = cacheKey(selection, instances);
    const cached = this.cache.get(key);
    if (cached?.unavailable.every((u) => u.reason === "conflict")) return Promise.resolve(cached);
    // A report (no restart) and a use must not share one computation, nor may computations across a reload.
    const flight = `${this.generation}|${restart ? "use" : "report"}|${key}`;
    let p = this.inflight.get(flight);
    if (!p) {
      p = this.compute(selection, instances, key, restart).finally(() => this.inflight.delete(flight));
      this.inflight.set(flight, p);
    }
    return p;
  }

  /** What a session advertises: tools always; prompts, resources, completions, logging as its upstreams offer. */
  capabilitiesOf(resolution: Resolution, instances: ReadonlyMap<string, Instance>): ServerCapabilities {
    const caps = resolution.upstreams.map(
      (u) => this.pool.connection(u, instances.get(u) ?? SHARED).capabilities ?? {},
    );
    const any = (f: (c: ServerCapabilities) => unknown) => caps.some((c) => !!f(c));
    return {
      tools: { listChanged: true },
      ...(any((c) => c.prompts) ? { prompts: { listChanged: true } } : {}),
      ...(any((c) => c.resources)
        ? {
            resources: {
              listChanged: true,
              ...(any((c) => c.resources?.subscribe) ? { subscribe: true } : {}),
            },
          }
        : {}),
      ...(any((c) => c.completions) ? { completions: {} } : {}),
      ...(any((c) => c.logging) ? { logging: {} } : {}),
    };
  }

  /** GET /toolsets: what a connection with these headers and this selection would get. Not a use: no restarts. */
  async reportFor(selection: Selection, headers: IncomingHttpHeaders = {}): Promise<ToolsetsReport> {
    const instances = this.instancesFor(selection, headers);
    for (const [name, instance] of instances) this.pool.acquire(name, instance);
    try {
      return this.report(selection, await this.resolve(selection, instances, false));
    } finally {
      for (const [name, instance] of instances) this.pool.release(name, instance);
    }
  }

  report(selection: Selection, resolution: Resolution): ToolsetsReport {
    return toolsetsReport(
      this.catalog,
      selection,
      resolution,
      this.offersToolsetsTool(resolution) ? [toolsetsToolDef] : [],
      this.everything(),
    );
  }

  /**
   * Every toolset resolved against what the shared upstream instances have already listed: the figures of the
   * toolsets a selection leaves out. Pure; starts nothing (an opt-in toolset's server stays unstarted, and its
   * toolsets have no figure until something uses it).
   */
  private everything(): Resolution {
    const known = new Map<string, UpstreamState>();
    for (const i of this.pool.instances()) {
      if (i.state && i.id === instanceId(i.name, SHARED.key)) known.set(i.name, i.state);
    }
    return resolve(this.catalog, everythingSelection(this.catalog), known);
  }

  openSession(
    selection: Selection,
    resolution: Resolution,
    instances: ReadonlyMap<string, Instance> = new Map(),
  ): Session {
    for (const [name, instance] of instances) this.pool.acquire(name, instance);
    const session = new Session(this, selection, resolution, instances);
    this.sessions.add(session);
    this.metrics.sessions.inc({ selection: selection.key });
    return session;
  }

  async closeSession(session: Session): Promise<void> {
    if (!this.sessions.delete(session)) return;
    this.metrics.sessions.dec({ selection: session.selection.key });
    try {
      for (const [id, uri] of this.traffic.forget(session)) {
        // Only on a connection that is up: closing a session must not start (or resurrect) an upstream.
        const upstream = this.pool.existing(id);
        if (upstream?.state?.status === "ready")
          void upstream.request("resources/unsubscribe", { uri }).catch(() => {});
      }
      await session.close();
    } finally {
      for (const [name, instance] of session.instances) this.pool.release(name, instance);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.sessions].map((s) => this.closeSession(s)));
    await this.pool.close();
  }

  offersToolsetsTool(resolution: Resolution): boolean {
    return this.options.toolsetsTool && !resolution.tool.has(TOOLSETS_TOOL);
  }

  /**
   * Swaps in a new catalog (already validated): new sessions get it at once; live sessions keep their selection,
   * are resolved again against it and told if what they see changed.
   */
  async reload(catalog: Catalog): Promise<void> {
    this.current = catalog;
    this.generation++;
    this.cache.clear();
    await this.pool.setCatalog(catalog);
    await Promise.all(
      [...this.sessions].map(async (s) => {
        const resolution = await this.resolve(s.selection, s.instances);
        if (this.sessions.has(s)) s.update(resolution);
      }),
    );
  }

  private async compute(
    selection: Selection,
    instances: ReadonlyMap<string, Instance>,
    key: string,
    restart: boolean,
  ): Promise<Resolution> {
    const catalog = this.catalog;
    const inventory = await this.pool.ensure(this.upstreamsOf(selection), instances, restart);
    const { resolution } = await resolveWithRefresh(catalog, selection, inventory, (u) =>
      this.pool.refresh(u, instances.get(u) ?? SHARED),
    );
    for (const u of resolution.unavailable) {
      this.metrics.refusals.inc({ toolset: u.name, reason: u.reason });
      this.options.logger.warn("toolset not enabled", {
        toolset: u.name,
        reason: u.reason,
        missing: u.missing,
        detail: u.detail,
      });
    }
    if (selection.unknown.length)
      this.options.logger.warn("unknown toolset names", { unknown: selection.unknown });
    if (catalog === this.catalog) this.cache.set(key, resolution);
    return resolution;
  }

  /**
   * An upstream's lists or availability changed: drop cached resolutions that involve it. Live sessions on that
   * instance are re-resolved with their fixed selection when it lists again; a session whose upstream went down
   * keeps its tools (the next call restarts the upstream, or fails naming it).
   */
  private upstreamChanged(upstream: string, state: UpstreamState, key: string): void {
    for (const [k, r] of this.cache) {
      if (r.requested.some((n) => this.catalog.toolset.get(n)?.upstreams.includes(upstream)))
        this.cache.delete(k);
    }
    if (state.status !== "ready") return;
    const id = instanceId(upstream, key);
    const groups = new Map<string, Session[]>();
    for (const s of this.sessions) {
      if (!this.upstreamsOf(s.selection).includes(upstream) || s.instanceId(upstream) !== id) continue;
      const k = cacheKey(s.selection, s.instances);
      groups.set(k, [...(groups.get(k) ?? []), s]);
    }
    for (const group of groups.values()) {
      const first = group[0]!;
      this.resolve(first.selection, first.instances).then(
        (resolution) => {
          for (const s of group) if (this.sessions.has(s)) s.update(resolution);
        },
        (err: Error) => this.logger.warn("re-resolving sessions failed", { upstream, error: err.message }),
      );
    }
  }
}
