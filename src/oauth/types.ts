/** @module The OAuth client's shapes: its config, the metadata it reads, and the interfaces the connection uses. */

/**
 * `upstreams.NAME.oauth` in packs.yaml (an HTTP upstream only), after `${VAR}` interpolation:
 *
 * ```yaml
 * upstreams:
 *   github:
 *     url: https://api.example.com/mcp
 *     oauth:
 *       mode: per-user              # shared | per-user
 *       grant: authorization_code   # or client_credentials (machine to machine; needs client_id/secret)
 *       client_id: ${GH_CLIENT_ID}  # pre-registered client; omit to use a metadata document or registration
 *       client_secret: ${GH_CLIENT_SECRET}
 *       issuer: https://auth.example.com   # the AS the pre-registered client belongs to (optional)
 *       scopes: [repo, read:org]     # used when neither the upstream's challenge nor its metadata names scopes
 *       client_metadata_url: https://toolpacks.example.com/oauth/client-metadata.json
 *       admins: ["static:ops"]       # shared: who may replace the grant through the start page
 * ```
 */
export interface OAuthUpstreamConfig {
  readonly mode: "shared" | "per-user";
  /** Default `authorization_code`. */
  readonly grant?: "authorization_code" | "client_credentials";
  readonly client_id?: string;
  readonly client_secret?: string;
  /** The issuer a pre-registered client belongs to: credentials are never sent to another one. */
  readonly issuer?: string;
  readonly scopes?: readonly string[];
  /** An https URL where this toolpacks serves its Client ID Metadata Document (used when the AS supports it). */
  readonly client_metadata_url?: string;
  /**
   * `mode: shared`: the identities (`static:SUBJECT`, `oauth:SUB`, as `identityKey` writes them) that may replace
   * the grant everyone uses through the start page. Nobody else may; `toolpacks login` (the operator) always may.
   */
  readonly admins?: readonly string[];
}

/** What the OAuth client needs to know about one HTTP upstream. */
export interface OAuthUpstream {
  readonly name: string;
  readonly url: string;
  readonly oauth: OAuthUpstreamConfig;
}

/** What a connection asks of the OAuth client, one instance per (upstream, principal) or per shared upstream. */
export interface UpstreamAuth {
  /** Headers to add to every request to the upstream (`{}` when nothing is authorized yet). */
  headers(): Promise<Record<string, string>>;
  /**
   * The upstream answered 401, or 403 with `error="insufficient_scope"`. `"retry"`: send the request again with
   * fresh `headers()`. `{ authorizeUrl }`: a person must authorize first. `sent` (optional) is the headers the failed
   * request carried, so a request that raced a refresh is retried instead of refreshing twice. Throws
   * `OAuthFlowError` when the upstream cannot be authorized (a retry limit, a bad metadata document, …).
   */
  onUnauthorized(
    wwwAuthenticate: string,
    sent?: Readonly<Record<string, string>>,
  ): Promise<"retry" | { authorizeUrl: string }>;
}

/** Async key/value storage for credentials; values are JSON text. A Redis implementation fits the same shape. */
export interface TokenStore {
  get(key: string): Promise<string | undefined>;
  /** `expiresAt` (epoch ms): the entry may be dropped after it (flows in progress); Redis: `SET … PXAT`. */
  put(key: string, value: string, options?: { readonly expiresAt?: number }): Promise<void>;
  delete(key: string): Promise<void>;
}

/** RFC 9728 protected resource metadata (the fields used). */
export interface ResourceMetadata {
  readonly resource?: string;
  readonly authorization_servers: readonly string[];
  readonly scopes_supported?: readonly string[];
}

/** RFC 8414 / OpenID provider metadata (the fields used). */
export interface AuthServerMetadata {
  readonly issuer: string;
  readonly authorization_endpoint?: string;
  readonly token_endpoint: string;
  readonly registration_endpoint?: string;
  readonly scopes_supported?: readonly string[];
  readonly code_challenge_methods_supported?: readonly string[];
  readonly token_endpoint_auth_methods_supported?: readonly string[];
  readonly grant_types_supported?: readonly string[];
  readonly authorization_response_iss_parameter_supported?: boolean;
  readonly client_id_metadata_document_supported?: boolean;
}

/** The result of discovery, starting from the upstream's challenge. */
export interface Discovery {
  /** The `resource` indicator (RFC 8707) sent on authorization and token requests. */
  readonly resource: string;
  readonly resourceMetadata: ResourceMetadata;
  readonly as: AuthServerMetadata;
}

export type TokenEndpointAuthMethod = "client_secret_basic" | "client_secret_post" | "none";

/** A client identity at one authorization server (pre-registered, a metadata document URL, or registered). */
export interface ClientRecord {
  readonly issuer: string;
  readonly client_id: string;
  readonly client_secret?: string;
  readonly token_endpoint_auth_method: TokenEndpointAuthMethod;
  readonly redirect_uris: readonly string[];
  readonly source: "config" | "metadata-document" | "registered";
}

/** How a grant or a flow names its client, so the same client (and only it) redeems and refreshes. */
export interface ClientRef {
  readonly source: ClientRecord["source"];
  readonly client_id: string;
  readonly method: TokenEndpointAuthMethod;
  /** For a registered client: the redirect slot it is stored under. */
  readonly slot?: string;
}

/** Tokens held for one (upstream, principal), bound to the issuer and client that issued them. */
export interface GrantRecord {
  readonly issuer: string;
  readonly token_endpoint: string;
  readonly client: ClientRef;
  readonly resource: string;
  readonly grant: "authorization_code" | "client_credentials";
  /** Scopes requested (the union carried into a step-up). */
  readonly scopes: readonly string[];
  readonly access_token: string;
  readonly refresh_token?: string;
  /** Epoch ms; absent when the AS gave no lifetime. */
  readonly expires_at?: number;
  readonly obtained_at: number;
}

/** An authorization in flight, found again by its `state`. */
export interface PendingRecord {
  readonly upstream: string;
  readonly principal: string;
  readonly issuer: string;
  readonly iss_supported: boolean;
  readonly token_endpoint: string;
  readonly client: ClientRef;
  readonly redirect_uri: string;
  readonly code_verifier: string;
  readonly resource: string;
  readonly scopes: readonly string[];
  readonly expires_at: number;
  /** SHA-256 (hex) of the browser-binding nonce set as a cookie by the start endpoint. */
  readonly binding?: string;
  /** Who started it: the identity that proved itself at the start page (an administrator for a shared grant). */
  readonly by?: string;
  /** The link it was started from (a digest), so that opening the link again finds this flow. */
  readonly link?: string;
}

/** The flow a link started, found again when the link is opened again (so a link makes one flow). */
export interface LinkRecord {
  /** The authorization server's URL to send the browser to. */
  readonly url: string;
  /** The browser-binding nonce the start page sets as a cookie. */
  readonly nonce: string;
  /** The digest of the flow's state (its PendingRecord's key). */
  readonly state: string;
  readonly expires_at: number;
}

/** A grant stored or dropped: what the serving core logs (warn for a shared grant) and writes to the audit log. */
export interface GrantChange {
  readonly upstream: string;
  readonly mode: OAuthUpstreamConfig["mode"];
  readonly action: "authorized" | "dropped";
  /** Whose grant: the principal's identity; "" for a shared upstream's. */
  readonly principal: string;
  /** Who made it: the identity that started the flow; undefined for toolpacks login (the operator) or a drop. */
  readonly by?: string;
  /** page: through the start page; login: toolpacks login; toolpacks: dropped because it stopped working. */
  readonly via: "page" | "login" | "toolpacks";
  readonly reason?: string;
}

/** A request to one of the OAuth pages, as the HTTP layer hands it over (routes.ts). */
export interface FlowRequest {
  readonly method: string;
  /** The request target: a path with its query (`/oauth/callback?code=…`). */
  readonly url: string;
  /** The request's Cookie header. */
  readonly cookie?: string;
  /**
   * The identity the HTTP layer authenticated (a bearer token; or, posted to a shared upstream's start page, an
   * administrator's token), if any. Without one, a per-user start URL must carry a ticket toolpacks handed out.
   */
  readonly principal?: string;
  /** A POST's form fields (the HTTP layer has taken any token out). */
  readonly form?: URLSearchParams;
}

export interface FlowResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | readonly string[]>>;
  readonly body: string;
}
