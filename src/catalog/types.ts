/** @module The compiled, frozen catalog: what the config means, independent of how it was written. */
import type { AuthConfig, Requires } from "../auth/types.js";
import type { UpstreamSpec } from "../config/types.js";
import type { OAuthUpstreamConfig } from "../oauth/types.js";
import type { StatePlan } from "../state/config.js";
import type { TracingPlan } from "../tracing/config.js";
import type { ClientProfile } from "./client-profile.js";
import type { Limits } from "./limits.js";

export type { ClientProfile } from "./client-profile.js";

/** A tool or prompt is matched by name; a resource member by URI or URI template. */
export type MemberKind = "tool" | "prompt" | "resource";

export interface Member {
  readonly kind: MemberKind;
  readonly upstream: string;
  /** The part after `upstream/`: a name, or a glob. */
  readonly pattern: string;
  /** `upstream/pattern`, as reported in `missing` (prompts and resources are marked: `prompt:u/p`). */
  readonly ref: string;
  /** Set for globs; exact members compare by string. */
  readonly regex?: RegExp;
  /** A required member must be satisfied for its toolset to be enabled (an implicit whole-upstream member is not). */
  readonly required: boolean;
  readonly as?: string;
  readonly title?: string;
  readonly description?: string;
  /** `file:line:col` of the declaration. */
  readonly where: string;
}

export interface Toolset {
  readonly name: string;
  /** Falls back to the name. */
  readonly title: string;
  readonly description: string;
  readonly instructions?: string;
  readonly default: boolean;
  readonly always: boolean;
  /** Its tools are found with find_tools and called with call_tool instead of being listed. */
  readonly deferred: boolean;
  /** Made for an upstream that no toolset mentions. */
  readonly implicit: boolean;
  readonly members: readonly Member[];
  /** The upstreams its members live on, in first-mention order. */
  readonly upstreams: readonly string[];
  readonly where: string;
  /** Results over this many bytes are captured as handles (undefined: off). */
  readonly captureOverBytes?: number;
  /** Who may use it (`requires:`); undefined: everyone. */
  readonly requires?: Requires;
}

/** `audit:` compiled: where per-call lines go, and how a subject is written everywhere. */
export interface AuditSettings {
  /** An absolute file to append to, or stderr; none: no audit lines. */
  readonly sink?: { readonly file: string } | { readonly stderr: true };
  readonly arguments: boolean;
  readonly subject: "plain" | "digest";
}

/** A root toolpacks itself gives an upstream instance (MCP `Root`). */
export interface Root {
  /** An absolute `file://` URI. */
  readonly uri: string;
  /** The last path segment (absent for `/`). */
  readonly name?: string;
}

export interface Upstream {
  readonly name: string;
  readonly transport: "stdio" | "http";
  readonly url?: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly command?: string;
  readonly args: readonly string[];
  /** May hold `${instance.dir}` / `${instance.id}` (per-instance stdio only): see config/instance-vars.ts. */
  readonly env: Readonly<Record<string, string>>;
  /** Names of the proxy's environment variables the command inherits beyond the minimal set (stdio). */
  readonly inheritEnv: readonly string[];
  /** Absolute; relative `cwd` is taken from the config file's folder (`${instance.dir}…` is kept as written). */
  readonly cwd: string;
  /** Longest line a stdio upstream may write (bytes). */
  readonly maxLineBytes: number;
  readonly prefix: string;
  /** Per forwarded request without result or progress. */
  readonly callTimeoutMs: number;
  readonly connectTimeoutMs: number;
  /** How long a client may take to answer input this upstream asked for. */
  readonly inputTimeoutMs: number;
  readonly validateArguments: boolean;
  /** Lower-case header names forwarded from the client to this (HTTP) upstream. */
  readonly forwardHeaders: readonly string[];
  /** Lower-case header name → environment variable, for a stdio upstream's per-credential processes. */
  readonly headerEnv: Readonly<Record<string, string>>;
  readonly isolation: "shared" | "per-session";
  readonly maxInstances: number;
  /** HTTP: connections each instance holds to the server at most (its own pool; SPEC §7.6). */
  readonly maxConnections: number;
  /** What toolpacks answers to `roots/list` from a shared or per-credential instance (empty: no `roots` capability). */
  readonly roots: readonly Root[];
  /** `in-flight`: also hand server→client messages to the one session with calls in flight (unsafe with several users). */
  readonly attribution: "tied" | "in-flight";
  readonly protocol: "auto" | "2025" | "2026-07-28";
  /** Results over this many bytes are captured as handles (undefined: off). */
  readonly captureOverBytes?: number;
  /** HTTP only: toolpacks obtains and refreshes OAuth tokens for it (shared, or per principal). */
  readonly oauth?: OAuthUpstreamConfig;
  /** Some declared toolset mentions it: then only named tools can be exposed. */
  readonly covered: boolean;
  /** As written, `${VAR}` unresolved: the only form any output may show. */
  readonly display: UpstreamSpec;
  readonly where: string;
}

/** `ui:` compiled: the browser console's setting as the files give it (serve decides with its options, src/console/setting.ts). */
export interface UiSettings {
  /** Asked for (true) or refused (false); undefined: on by default where it is safe. */
  readonly enabled?: boolean;
  /** Where it is served; undefined: /ui. */
  readonly path?: string;
}

export interface Catalog {
  readonly name: string;
  /** Static tokens and the resource server (undefined: no authentication). */
  readonly auth?: AuthConfig;
  readonly audit: AuditSettings;
  /** Values taken from the environment → their `${VAR}`: redacted from anything the proxy prints or serves. */
  readonly secrets: ReadonlyMap<string, string>;
  /** Captured bytes one session may hold (oldest evicted first): `state.limits.maxOwnerBytes`. */
  readonly stateMaxBytes: number;
  /** Where captured values and ended session ids live, and their budgets (`state:`, TOOLPACKS_STATE_STORE). */
  readonly state: StatePlan;
  /** Where spans go (`tracing:`, OTEL_EXPORTER_OTLP_ENDPOINT); absent: tracing is off. */
  readonly tracing?: TracingPlan;
  /** Bounds on what clients can make the proxy hold (`limits:`, defaults filled in). */
  readonly limits: Limits;
  /** Absolute folder for toolpacks' files on disk (instance directories). */
  readonly stateDir: string;
  readonly instructions?: string;
  /** Defer every active toolset but `always` ones when the selection's tools would exceed this many ≈tokens. */
  readonly autoDeferOverTokens?: number;
  /** Client profiles, first match wins: every file's `clients:` in file order, then the built-in ones. */
  readonly clients: readonly ClientProfile[];
  /** The browser console (`ui:`). */
  readonly ui: UiSettings;
  readonly upstreams: ReadonlyMap<string, Upstream>;
  /** In declaration order (first file first); implicit toolsets after declared ones. */
  readonly toolsets: readonly Toolset[];
  readonly toolset: ReadonlyMap<string, Toolset>;
  /** What the config says that has no effect, as `FILE:LINE:COL: warning: …` (`check` prints them, `serve` logs them). */
  readonly warnings?: readonly string[];
}
