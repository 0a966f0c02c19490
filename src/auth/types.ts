/** @module Identity types: the `auth:` config block, the principal a request carries, and toolset requirements. */

/**
 * The `auth:` block of packs.yaml, after `${VAR}` interpolation. The YAML it comes from:
 *
 * ```yaml
 * auth:
 *   tokens:                         # static bearer tokens (each at least 8 characters)
 *     - ${TOOLPACKS_TOKEN}          # a bare string: every scope, no claims, subject "token:<digest>"
 *     - token: ${CI_TOKEN}
 *       subject: ci                 # shown in logs instead of the digest
 *       scopes: [notes:read]        # only these scopes (no claims)
 *   oauth:                          # an OAuth 2.1 resource server (MCP authorization)
 *     issuer: https://auth.example.com            # exact `iss`; its metadata is discovered
 *     audience: https://mcp.example.com/mcp       # this server's canonical URL: `aud`, and `resource`
 *     scopes_supported: [mcp]                     # published in the protected resource metadata
 *     jwks_uri: https://auth.example.com/jwks     # optional: skip discovery for the keys
 *     algorithms: [RS256, ES256]                  # optional: default every asymmetric JWS algorithm
 *     step_up: true                               # a URL naming a toolset whose scopes are missing gets 403
 *     introspection:                              # optional: RFC 7662 for opaque (non-JWT) tokens
 *       url: https://auth.example.com/introspect
 *       client_id: toolpacks
 *       client_secret: ${INTROSPECTION_SECRET}
 * ```
 */
export interface AuthConfig {
  readonly tokens?: readonly (string | StaticTokenConfig)[];
  readonly oauth?: OAuthConfig;
}

export interface StaticTokenConfig {
  readonly token: string;
  readonly subject?: string;
  readonly scopes?: readonly string[];
}

export interface OAuthConfig {
  readonly issuer: string;
  readonly audience: string;
  readonly scopes_supported?: readonly string[];
  readonly jwks_uri?: string;
  readonly step_up?: boolean;
  readonly introspection?: IntrospectionConfig;
  readonly algorithms?: readonly string[];
}

export interface IntrospectionConfig {
  readonly url: string;
  readonly client_id: string;
  readonly client_secret: string;
}

/** Who a request is, as far as toolsets care. Never holds the token itself. */
export interface Principal {
  readonly subject: string;
  /** `"all"`: a bare static token, which has every scope. */
  readonly scopes: ReadonlySet<string> | "all";
  readonly claims: Readonly<Record<string, unknown>>;
  readonly via: "token" | "jwt" | "introspection";
}

/** `requires:` on a toolset: any-of within a list, all-of across keys (`scopes` is one key). */
export interface Requires {
  readonly scopes?: readonly string[];
  readonly claims?: Readonly<Record<string, readonly string[]>>;
}

export type AuthFailure =
  | {
      readonly ok: false;
      /** 400 only for a malformed Authorization header (`invalid_request`). */
      readonly status: 400 | 401 | 403;
      /** The whole `WWW-Authenticate` header value to send. */
      readonly wwwAuthenticate: string;
      readonly error: "invalid_request" | "invalid_token" | "insufficient_scope";
      /** Safe to show: never quotes the token or a secret. */
      readonly description: string;
    }
  | {
      /** The token could not be checked now (the authorization server is unreachable): not the client's fault. */
      readonly ok: false;
      readonly status: 503;
      readonly error: "temporarily_unavailable";
      readonly description: string;
      /** Seconds, for a `Retry-After` header. */
      readonly retryAfter: number;
    };

export type AuthResult = { readonly ok: true; readonly principal: Principal } | AuthFailure;

/** What the request's headers look like: node's `IncomingHttpHeaders`, or a Web `Headers`. */
export type HeadersLike =
  | Readonly<Record<string, string | readonly string[] | undefined>>
  | { get(name: string): string | null };

/** The only parts of a logger this module uses (the project's `Logger` fits). */
export interface AuthLogger {
  warn(msg: string, fields?: Record<string, unknown>): void;
  debug(msg: string, fields?: Record<string, unknown>): void;
}

export interface AuthDeps {
  readonly fetch?: typeof fetch;
  /** Milliseconds since the epoch. */
  readonly now?: () => number;
  readonly logger?: AuthLogger;
  /** A limit of SPEC §7.6 was reached (`introspections`): for `toolpacks_limit_hits_total`. */
  readonly onLimit?: (limit: string) => void;
}
