/**
 * @module What the browser console needs of the serving core, as one narrow interface: the report a query gives a
 * principal, the enable gate for one toolset, and a live snapshot. The console draws only what these return, and
 * they return only what GET /toolsets and GET /metrics already give a caller; src/console/gateway-source.ts
 * implements them over today's Gateway.
 */
import type { Principal } from "../auth/types.js";
import type { UpstreamState } from "../catalog/inventory.js";
import type { Catalog } from "../catalog/types.js";
import type { ExtraTool, ToolsetsReport } from "../report.js";
import type { Resolution } from "../resolve.js";
import type { Selection } from "../selection.js";
import type { WireError } from "../wire/errors.js";

/** One running (or starting) upstream instance. */
export interface InstanceView {
  readonly upstream: string;
  readonly kind: "shared" | "credential" | "session";
  /** Undefined while it has not listed yet (starting). */
  readonly state: UpstreamState | undefined;
  /** The MCP revision spoken to it, once known. */
  readonly era?: string | undefined;
}

/** What `GET /toolsets?<query>` answers a principal, with what it was made from. */
export interface ReportView {
  /** The query's selection, narrowed by the principal (`denied`: every toolset it may not use). */
  readonly selection: Selection;
  /** Exactly the `/toolsets` payload. */
  readonly report: ToolsetsReport;
  /** The resolution the report was made from (the gate applied, as for a session). */
  readonly resolution: Resolution;
  /** Every instance now, with its state; reading them starts nothing. */
  readonly instances: readonly InstanceView[];
}

/** An answer, or the refusal the route should send (the error table's one shape: its status and headers). */
export type Answer<T> = T | WireError;

export interface LiveView {
  readonly instances: readonly InstanceView[];
  /** Open sessions by the canonical key of their selection. */
  readonly sessions: ReadonlyMap<string, number>;
  /** Tool calls since the process started (toolpacks_calls_total), summed by toolset and outcome. */
  readonly calls: readonly { readonly toolset: string; readonly outcome: string; readonly count: number }[];
}

/** How the server reads URLs and fills lists: what the console must know to spell and count a selection. */
interface ServingSettings {
  readonly name: string;
  readonly version: string;
  /** `serve --toolsets`: what a URL naming nothing gets. */
  readonly defaultSelection?: string | undefined;
  readonly ignoreKeys: readonly string[];
  readonly toolsetsTool: boolean;
}

export interface ConsoleSource {
  /** The catalog new sessions get (a reload swaps it). */
  readonly catalog: Catalog;
  readonly settings: ServingSettings;
  /** GET /toolsets?<query> for this principal: what a connection with that query would get now. */
  report(query: string, principal: Principal | undefined): Promise<Answer<ReportView>>;
  /**
   * The enable gate for one toolset, as a session meets it: its upstreams' lists are read again (one that is not
   * running is started, after its backoff), then `report(query)`. Nothing is refreshed for a toolset the principal
   * may not use. An unknown toolset is 404.
   */
  recheck(query: string, toolset: string, principal: Principal | undefined): Promise<Answer<ReportView>>;
  /** What runs now, who uses it, and what it was asked: reading it starts and costs nothing. */
  live(): Promise<LiveView>;
  /** The tools the server appends to a resolution's list (list_server_toolsets, inspect_state), as sessions get them. */
  extraTools(resolution: Resolution): readonly ExtraTool[];
}
