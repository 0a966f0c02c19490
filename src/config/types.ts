/** @module The user's config as written (after validation and `${VAR}` interpolation). Mirrors schema/packs.schema.json. */
import type { AuthConfig, Requires } from "../auth/types.js";

interface MemberObject {
  tool: string;
  as?: string;
  title?: string;
  description?: string;
}
export type MemberSpec = string | MemberObject;

interface PromptObject {
  prompt: string;
  as?: string;
  title?: string;
  description?: string;
}
export type PromptSpec = string | PromptObject;

export interface UpstreamSpec {
  url?: string;
  headers?: Record<string, string>;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  inherit_env?: string[];
  max_line_bytes?: number;
  prefix?: string;
  call_timeout?: number;
  connect_timeout?: number;
  input_timeout?: number;
  validate_arguments?: boolean;
  forward_headers?: string[];
  header_env?: Record<string, string>;
  isolation?: "shared" | "per-session";
  max_instances?: number;
  max_connections?: number;
  roots?: string[];
  attribution?: "tied" | "in-flight";
  /** YAML reads an unquoted 2025 as a number. */
  protocol?: "auto" | "2025" | 2025 | "2026-07-28";
  capture?: { over_bytes: number };
  /** An HTTP upstream that accepts only OAuth: toolpacks is its client (src/oauth/types.ts). */
  oauth?: UpstreamOAuthSpec;
}

/** `upstreams.NAME.oauth` as written (checked further by the compiler: src/catalog/oauth.ts). */
interface UpstreamOAuthSpec {
  mode: "shared" | "per-user";
  grant?: "authorization_code" | "client_credentials";
  client_id?: string;
  client_secret?: string;
  issuer?: string;
  scopes?: string[];
  client_metadata_url?: string;
  admins?: string[];
}

export interface ToolsetSpec {
  title?: string;
  description?: string;
  instructions?: string;
  default?: boolean;
  always?: boolean;
  deferred?: boolean;
  tools?: MemberSpec[];
  prompts?: PromptSpec[];
  resources?: string[];
  capture?: { over_bytes: number };
  requires?: Requires;
}

/** `audit:`: where the per-call audit lines go, and how subjects are written everywhere. */
interface AuditSpec {
  file?: string;
  stderr?: true;
  arguments?: boolean;
  subject?: "plain" | "digest";
}

/** `limits:` as written (see src/catalog/limits.ts). */
export interface LimitsSpec {
  sessions?: number;
  sessions_per_client?: number;
  instances_per_minute?: number;
  batch?: number;
  requests_per_session?: number;
  pending_output_bytes?: number;
  stalled_reader_timeout?: number;
  contexts?: number;
  contexts_per_client?: number;
  listen_streams?: number;
  listen_streams_per_client?: number;
  parked_calls?: number;
  parked_calls_per_client?: number;
  ipv6_prefix?: number;
}

/** One entry of `clients:` as written (compiled by src/catalog/clients.ts). */
export interface ClientSpec {
  client: string | string[];
  version?: string;
  capabilities?: Record<string, boolean>;
  max_tools?: number;
  max_list_bytes?: number;
  defer?: "auto" | "all" | "none";
  selection?: string;
  max_description_bytes?: number;
}

export interface PacksFile {
  name?: string;
  auth?: AuthConfig;
  audit?: AuditSpec;
  state?: { store?: string; max_session_bytes?: number; max_total_bytes?: number };
  tracing?: { endpoint?: string; service_name?: string; sample_ratio?: number };
  limits?: LimitsSpec;
  instructions?: string;
  public_env?: string[];
  state_dir?: string;
  search?: { auto_over_tokens?: number };
  clients?: ClientSpec[];
  ui?: boolean | { enabled?: boolean; path?: string };
  upstreams?: Record<string, UpstreamSpec>;
  toolsets?: Record<string, ToolsetSpec>;
}
