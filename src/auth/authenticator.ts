/** @module The resource server: a request's bearer token → a principal, or the challenge to answer with. */
import {
  challengeInsufficientScope,
  challengeStaticOnly,
  challengeUnauthorized,
  resourceMetadataUrlFor,
} from "./challenge.js";
import { checkAuthConfig } from "./config-check.js";
import { createIntrospector, type Introspector } from "./introspection.js";
import { DEFAULT_ALGORITHMS, looksLikeJwt, type Verdict, verifyJwt } from "./jwt.js";
import { createKeySource, JWKS_COOLDOWN_MS, type KeySource } from "./keys.js";
import { metadataPaths, type ProtectedResourceMetadata, protectedResourceMetadata } from "./metadata.js";
import { scopesToChallenge } from "./requirements.js";
import { staticTokens } from "./static-tokens.js";
import { createTokenCache } from "./token-cache.js";
import type {
  AuthConfig,
  AuthDeps,
  AuthFailure,
  AuthResult,
  HeadersLike,
  OAuthConfig,
  Principal,
  Requires,
} from "./types.js";

interface AuthenticateOptions {
  /** Scopes a 401 asks for (default: `scopes_supported`), e.g. what the URL's selection needs. */
  readonly scopes?: readonly string[];
}

export interface Authenticator {
  /** Never throws. Every request must be authenticated; nothing is remembered per connection. */
  authenticate(headers: HeadersLike, options?: AuthenticateOptions): Promise<AuthResult>;
  /** The RFC 9728 document (`resource` defaults to the audience); undefined without `oauth:`. */
  metadata(resourceUrl?: string): ProtectedResourceMetadata | undefined;
  /** The paths to serve `metadata()` at (empty without `oauth:`). */
  readonly metadataPaths: readonly string[];
  /** The URL every challenge points at (`resource_metadata`); undefined without `oauth:`. */
  readonly resourceMetadataUrl: string | undefined;
  /** `oauth.step_up`: a URL naming a toolset whose scopes the token lacks gets 403, not served around. */
  readonly stepUp: boolean;
  /**
   * The 403 step-up answer when scopes would satisfy `needed` (the requirements of what the request
   * asks for); undefined when the principal meets them, when only claims are missing (a new token
   * would not help), or without `oauth:`.
   */
  insufficientScope(principal: Principal, needed: readonly (Requires | undefined)[]): AuthFailure | undefined;
  /** Requests made to the authorization server (JWKS, introspection), for tests and metrics. */
  readonly stats: { readonly jwksFetches: number; readonly introspections: number };
  close(): void;
}

const BEARER = /^Bearer[ ]+([A-Za-z0-9\-._~+/]+=*)[ ]*$/i;

function authorizationOf(headers: HeadersLike): string | undefined {
  if (typeof headers.get === "function")
    return (headers as { get(n: string): string | null }).get("authorization") ?? undefined;
  const v = (headers as Readonly<Record<string, string | readonly string[] | undefined>>).authorization;
  return typeof v === "string" ? v : v?.[0];
}

export function createAuthenticator(config: AuthConfig, deps: AuthDeps = {}): Authenticator {
  const problems = checkAuthConfig(config);
  if (problems.length > 0) {
    throw new Error(
      `invalid auth config: ${problems.map((p) => `${p.path.join(".")}: ${p.message}`).join("; ")}`,
    );
  }
  const now = deps.now ?? Date.now;
  const fetchFn = deps.fetch ?? fetch;
  const closing = new AbortController();
  const statics = staticTokens(config.tokens ?? []);
  const oauth = config.oauth;
  const rmUrl = oauth ? resourceMetadataUrlFor(oauth.audience) : undefined;
  const keys: KeySource | undefined = oauth
    ? createKeySource({
        issuer: oauth.issuer,
        ...(oauth.jwks_uri ? { jwksUri: oauth.jwks_uri } : {}),
        fetch: fetchFn,
        now,
        ...(deps.logger ? { logger: deps.logger } : {}),
        closing: closing.signal,
      })
    : undefined;
  const introspector: Introspector | undefined =
    oauth?.introspection &&
    createIntrospector({
      config: oauth.introspection,
      issuer: oauth.issuer,
      audience: oauth.audience,
      fetch: fetchFn,
      now,
      closing: closing.signal,
      ...(deps.logger ? { logger: deps.logger } : {}),
      ...(deps.onLimit ? { onLimit: deps.onLimit } : {}),
    });

  const unauthorized = (
    error: "invalid_token" | "invalid_request" | undefined,
    description: string,
    scopes?: readonly string[],
  ): AuthFailure => {
    const status = error === "invalid_request" ? 400 : 401;
    const wwwAuthenticate = rmUrl
      ? challengeUnauthorized(rmUrl, {
          ...(error ? { error, description } : {}),
          ...(scopes ? { scopes } : oauth?.scopes_supported ? { scopes: oauth.scopes_supported } : {}),
        })
      : challengeStaticOnly(error === "invalid_token" ? error : undefined, description);
    return { ok: false, status, wwwAuthenticate, error: error ?? "invalid_token", description };
  };

  // Accepted tokens until their exp: a session's every request carries the same token, and a
  // signature check costs ~10x a digest. A key the issuer withdraws is thus honoured until exp.
  const accepted = createTokenCache(now);

  async function check(token: string): Promise<Verdict> {
    if (!oauth || !keys) return { ok: false, unavailable: false, description: "the token is not accepted" };
    const known = accepted.get(token);
    if (known) return { ok: true, principal: known };
    const v = await verify(token, oauth, keys);
    if (v.ok) accepted.set(token, v.principal, v.expiresAt);
    return v;
  }

  async function verify(token: string, oauth: OAuthConfig, keys: KeySource): Promise<Verdict> {
    if (looksLikeJwt(token)) {
      const v = await verifyJwt(token, {
        issuer: oauth.issuer,
        audience: oauth.audience,
        algorithms: oauth.algorithms ?? DEFAULT_ALGORITHMS,
        keys,
        now,
      });
      if (v.ok && v.principal.claims.cnf !== undefined) {
        return {
          ok: false,
          unavailable: false,
          description: "the token is bound to a key (cnf), which is not supported",
        };
      }
      return v;
    }
    if (introspector) return introspector.check(token);
    return { ok: false, unavailable: false, description: "the token is not a JWT access token" };
  }

  return {
    stepUp: oauth?.step_up === true,
    resourceMetadataUrl: rmUrl,
    metadataPaths: oauth ? metadataPaths(oauth.audience) : [],
    get stats() {
      return { jwksFetches: keys?.fetches ?? 0, introspections: introspector?.requests ?? 0 };
    },
    metadata: (resourceUrl) => (oauth ? protectedResourceMetadata(oauth, resourceUrl) : undefined),

    async authenticate(headers, options = {}) {
      const header = authorizationOf(headers);
      if (header === undefined || !/^Bearer\s+\S/i.test(header)) {
        // No credentials, an empty one, or another scheme: a plain challenge without an error code (RFC 6750 §3.1).
        return unauthorized(undefined, "this resource needs a bearer token", options.scopes);
      }
      const m = BEARER.exec(header);
      if (!m)
        return unauthorized(
          "invalid_request",
          "the Authorization header is not a bearer token",
          options.scopes,
        );
      const token = m[1]!;
      const fixed = statics.match(token);
      if (fixed) return { ok: true, principal: fixed };
      let v: Verdict;
      try {
        v = await check(token);
      } catch {
        v = { ok: false, unavailable: false, description: "the token could not be verified" };
      }
      if (v.ok) return { ok: true, principal: v.principal };
      deps.logger?.debug("auth: token refused", { reason: v.description });
      if (v.unavailable) {
        return {
          ok: false,
          status: 503,
          error: "temporarily_unavailable",
          description: v.description,
          retryAfter: v.retryAfter ?? Math.ceil(JWKS_COOLDOWN_MS / 1000),
        };
      }
      return unauthorized("invalid_token", v.description, options.scopes);
    },

    insufficientScope(principal, needed) {
      if (!oauth || !rmUrl) return undefined;
      const missing = scopesToChallenge(principal, needed);
      if (missing.length === 0) return undefined;
      // Held scopes too: an SDK v1 client asks for exactly the challenged set, and would lose them.
      const held = principal.scopes === "all" ? [] : [...principal.scopes];
      const scopes = [...(oauth.scopes_supported ?? []), ...held, ...missing].filter(
        (s) => s !== "offline_access",
      );
      const description = "the token lacks a scope this request needs";
      return {
        ok: false,
        status: 403,
        wwwAuthenticate: challengeInsufficientScope(scopes, rmUrl, description),
        error: "insufficient_scope",
        description,
      };
    },

    close() {
      closing.abort();
      accepted.clear();
    },
  };
}
