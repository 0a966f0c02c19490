/**
 * @module The console's JSON (SPEC §17.3): what `GET <ui>/api/toolsets`, `…/api/recheck/NAME` and `…/api/live`
 * answer. The page draws only these; a script reads the same. Types only, shared by the server and the page, so
 * this module imports nothing of the server's: the shapes it repeats (a report, a figure, a reason) are checked
 * against the server's own where the server fills them in (payload.ts).
 */
import type { StdioLaunch } from "./snippets.js";

/** Why a toolset is not enabled (src/resolve/types.ts `Reason`). */
type Reason = "missing" | "upstream-unavailable" | "conflict" | "forbidden" | "authorization_required";

/** Tools and what their definitions cost per turn (src/report.ts `Figure`). */
export interface Figure {
  readonly tools: number;
  readonly schema_bytes: number;
  readonly approx_tokens: number;
}

/** `requires:` (src/auth/types.ts `Requires`). */
interface Requires {
  readonly scopes?: readonly string[];
  readonly claims?: Readonly<Record<string, readonly string[]>>;
}

/** The `/toolsets` payload (src/report.ts `ToolsetsReport`, SPEC §6.2), all of it; the parts the page reads are typed. */
interface Report {
  readonly toolsets: readonly {
    readonly name: string;
    readonly active: boolean;
    readonly deferred: boolean;
  }[];
  readonly active: readonly string[];
  readonly tools?: readonly string[];
  readonly unknown: readonly string[];
  readonly schema_bytes?: number;
  readonly approx_tokens?: number;
}

export interface ServerInfo {
  readonly name: string;
  readonly version: string;
  readonly mcp_path: string;
  readonly ui_path: string;
  /** `serve --toolsets`: what a URL naming nothing gets; null: each toolset's own default. */
  readonly default_selection: string | null;
  readonly ignore_query_keys: readonly string[];
  readonly toolsets_tool: boolean;
  /** What a client must send: nothing, or a bearer token (static, or from the authorization server). */
  readonly auth: "none" | "token";
  readonly audit: "off" | "file" | "stderr";
  /** How to start this server over stdio on its own machine; null when it cannot say (embedded). */
  readonly stdio: StdioLaunch | null;
}

/** Why a toolset is not on, or would not be. */
export interface Problem {
  readonly reason: Reason;
  readonly missing: readonly string[];
  readonly detail: string;
  /** `authorization_required`: the page where the caller authorizes the upstream. */
  readonly url?: string;
}

export interface ToolLine {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly upstream: string;
}

export interface ToolsetCard {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly default: boolean;
  readonly always: boolean;
  /** `deferred: true` in the config. */
  readonly deferred: boolean;
  /** Made for an upstream no toolset mentions. */
  readonly implicit: boolean;
  readonly requires?: Requires;
  /** The caller may not use it: nothing of its members, upstreams or tools is given. */
  readonly forbidden?: true;
  /** Request headers its upstreams take credentials from. */
  readonly headers?: readonly string[];
  /** In this selection: on (`active`), requested but not on (its reason), or not requested (`off`). */
  readonly state: "active" | "off" | Reason;
  /** Why it is not on; for a toolset not requested, why it would not be, from what its upstreams listed last. */
  readonly problem?: Problem;
  /** Its tools are found with find_tools in this selection (by the config, the URL or `search.auto_over_tokens`). */
  readonly deferred_now: boolean;
  /** Its members as written (`upstream/tool`, globs included). */
  readonly members?: readonly string[];
  readonly upstreams?: readonly string[];
  /** What it exposes; null while its upstreams have not listed (or when forbidden). */
  readonly tools: readonly ToolLine[] | null;
  /** The definitions of those tools, per turn when listed; null when unknown. */
  readonly cost: Figure | null;
}

type UpstreamStatus = "idle" | "starting" | "ready" | "failed";

export interface UpstreamPanel {
  readonly name: string;
  readonly transport: "stdio" | "http";
  readonly isolation: "shared" | "per-session";
  /** idle: not started (it costs nothing until a selection needs it). */
  readonly state: UpstreamStatus;
  readonly reason?: string;
  readonly era?: string;
  readonly tools: number | null;
  /** Tools it lists that no toolset claims (only to a caller who may use every toolset). */
  readonly unclaimed?: readonly string[];
  readonly toolsets: readonly string[];
  readonly instances: { readonly credential: number; readonly session: number };
}

export interface Costs {
  /** The selection's tools/list, as its sessions get it. */
  readonly selection: Figure;
  /** Every toolset the caller may use, listed. */
  readonly everything: Figure;
  /** The same, every toolset deferred but the always ones. */
  readonly deferred: Figure;
  /** Toolsets whose upstreams have not listed yet: not counted in the two above. */
  readonly unknown: readonly string[];
}

/** `GET <ui>/api/toolsets?<query>` and `GET <ui>/api/recheck/NAME?<query>`. */
export interface ConsolePayload {
  readonly server: ServerInfo;
  /** The query this answers, and its selection (requested, after the caller's access). */
  readonly query: string;
  readonly selection: { readonly active: readonly string[]; readonly deferred: readonly string[] };
  /** Exactly what `GET /toolsets?<query>` answers the same caller. */
  readonly report: Report;
  readonly toolsets: readonly ToolsetCard[];
  readonly upstreams: readonly UpstreamPanel[];
  readonly costs: Costs;
  /** The caller may not use some toolsets (their cards say what they need). */
  readonly scoped: boolean;
}

export interface AuditLine {
  readonly time: string;
  readonly subject: string | null;
  readonly toolset: string;
  readonly tool: string;
  readonly upstream: string;
  readonly outcome: string;
  readonly duration_ms: number;
}

interface CallsLine {
  readonly toolset: string;
  /** Since the process started. */
  readonly ok: number;
  /** `tool_error`, `error` and `timeout` (cancelled calls are neither). */
  readonly errors: number;
  /** Per minute, oldest first, the last of them the minute now under way; null where nobody was looking. */
  readonly minutes: readonly ({ readonly ok: number; readonly errors: number } | null)[];
}

/** `GET <ui>/api/live`. */
export interface LivePayload {
  readonly time: string;
  readonly upstreams: readonly Omit<UpstreamPanel, "unclaimed" | "toolsets">[];
  readonly sessions: readonly { readonly selection: string; readonly count: number }[];
  readonly calls: readonly CallsLine[];
  readonly audit: { readonly sink: ServerInfo["audit"]; readonly recent: readonly AuditLine[] };
}
