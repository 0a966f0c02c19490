/** @module The serving core shared by HTTP, stdio and embedding: catalog, upstream pool, resolutions, sessions. */
import type { ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { UpstreamState } from "../catalog/inventory.js";
import type { Catalog } from "../catalog/types.js";
import type { Logger } from "../log.js";
import { type ToolsetsReport, toolsetsReport } from "../report.js";
import { type Resolution, resolveWithRefresh } from "../resolve.js";
import { type Selection, type SelectResult, select } from "../selection.js";
import { UpstreamPool } from "../upstream/pool.js";
import { Session } from "./session.js";
import { TOOLSETS_TOOL } from "./toolsets-tool.js";
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
  /** Per forwarded call, without a result or progress (default 60 s). */
  readonly callTimeoutMs?: number;
}

/** What the shared upstream clients declare: every session's server→client requests can be carried. */
const UPSTREAM_CLIENT_CAPABILITIES = {
  sampling: {},
  elicitation: { form: {}, url: {} },
  roots: { listChanged: true },
};

export class Gateway {
  readonly pool: UpstreamPool;
  private readonly cache = new Map<string, Resolution>();
  private readonly inflight = new Map<string, Promise<Resolution>>();
  readonly sessions = new Set<Session>();
  readonly traffic: Traffic;

  constructor(
    readonly catalog: Catalog,
    readonly options: GatewayOptions,
  ) {
    this.traffic = new Traffic(
      (u) => [...this.sessions].filter((s) => s.resolution.upstreams.includes(u)),
      options.logger,
    );
    this.pool = new UpstreamPool(
      catalog,
      { clientName: options.name, clientVersion: options.version, logger: options.logger },
      {
        clientCapabilities: UPSTREAM_CLIENT_CAPABILITIES,
        onNotification: (u, n) => this.traffic.notification(u, n),
        onServerRequest: (u, request, signal) => this.traffic.serverRequest(u, request, signal),
      },
    );
    this.pool.onChange((upstream, state) => this.upstreamChanged(upstream, state));
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
   * The shared resolution of a selection: starts the upstreams it needs (only those), applies the gate, and
   * caches the result. A cached resolution with a pack not enabled is recomputed (the upstream may be back).
   */
  resolve(selection: Selection): Promise<Resolution> {
    const cached = this.cache.get(selection.key);
    if (cached && cached.unavailable.every((u) => u.reason === "conflict")) return Promise.resolve(cached);
    let p = this.inflight.get(selection.key);
    if (!p) {
      p = this.compute(selection).finally(() => this.inflight.delete(selection.key));
      this.inflight.set(selection.key, p);
    }
    return p;
  }

  /** What a session advertises: tools always; prompts, resources, completions, logging as its upstreams offer. */
  capabilitiesOf(resolution: Resolution): ServerCapabilities {
    const caps = resolution.upstreams.map((u) => this.pool.connection(u).capabilities ?? {});
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

  report(selection: Selection, resolution: Resolution): ToolsetsReport {
    return toolsetsReport(
      this.catalog,
      selection,
      resolution,
      this.offersToolsetsTool(resolution) ? [TOOLSETS_TOOL] : [],
    );
  }

  openSession(selection: Selection, resolution: Resolution): Session {
    const session = new Session(this, selection, resolution);
    this.sessions.add(session);
    return session;
  }

  async closeSession(session: Session): Promise<void> {
    if (!this.sessions.delete(session)) return;
    for (const [upstream, uri] of this.traffic.forget(session)) {
      void this.pool
        .connection(upstream)
        .request("resources/unsubscribe", { uri })
        .catch(() => {});
    }
    await session.close();
  }

  async close(): Promise<void> {
    await Promise.all([...this.sessions].map((s) => this.closeSession(s)));
    await this.pool.close();
  }

  offersToolsetsTool(resolution: Resolution): boolean {
    return this.options.toolsetsTool && !resolution.tool.has(TOOLSETS_TOOL);
  }

  private async compute(selection: Selection): Promise<Resolution> {
    const inventory = await this.pool.ensure(this.upstreamsOf(selection));
    const { resolution } = await resolveWithRefresh(this.catalog, selection, inventory, (u) =>
      this.pool.refresh(u),
    );
    for (const u of resolution.unavailable) {
      this.options.logger.warn("toolset not enabled", {
        toolset: u.name,
        reason: u.reason,
        missing: u.missing,
        detail: u.detail,
      });
    }
    if (selection.unknown.length)
      this.options.logger.warn("unknown toolset names", { unknown: selection.unknown });
    this.cache.set(selection.key, resolution);
    return resolution;
  }

  /**
   * An upstream's tools or availability changed: drop cached resolutions that involve it. Live sessions are
   * re-resolved with their fixed selection when it lists tools again; a session whose upstream went down keeps
   * its tools (the next call restarts the upstream, or fails naming it).
   */
  private upstreamChanged(upstream: string, state: UpstreamState): void {
    for (const [key, r] of this.cache) {
      if (r.requested.some((n) => this.catalog.toolset.get(n)?.upstreams.includes(upstream)))
        this.cache.delete(key);
    }
    if (state.status !== "ready") return;
    const groups = new Map<string, Session[]>();
    for (const s of this.sessions) {
      if (!this.upstreamsOf(s.selection).includes(upstream)) continue;
      groups.set(s.selection.key, [...(groups.get(s.selection.key) ?? []), s]);
    }
    for (const group of groups.values()) {
      const selection = group[0]!.selection;
      void this.resolve(selection).then((resolution) => {
        for (const s of group) if (this.sessions.has(s)) s.update(resolution);
      });
    }
  }
}
