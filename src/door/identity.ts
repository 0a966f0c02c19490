/**
 * @module Who is asking: the catalog's `auth:` as a resource server in front of the MCP path, /toolsets and
 * /metrics (every request checked on its own), the protected resource metadata, step-up, and whether a token
 * still grants what a session was opened with. Refusals are the error table's, with the status and challenge
 * RFC 6750 asks for. The client's token goes no further than this module: what passes on is a principal.
 */
import { gates, namedRequirements } from "../access.js";
import { type Authenticator, createAuthenticator } from "../auth/authenticator.js";
import { meetsRequirement, scopesToChallenge } from "../auth/requirements.js";
import type { AuthFailure, AuthLogger, Principal, Requires } from "../auth/types.js";
import type { Catalog } from "../catalog/types.js";
import { parseQuery } from "../selection.js";
import { errors, type WireError } from "../wire/errors.js";
import type { Headers } from "./arrival.js";

const WELL_KNOWN = "/.well-known/oauth-protected-resource";

export class Identity {
  private current:
    | { catalog: Catalog; key: string; auth: Authenticator | undefined; gated: boolean }
    | undefined;

  constructor(
    private readonly logger: AuthLogger,
    private readonly mcpPath: string,
    /** Query keys that are not toolset names (`serve --ignore-query-key`). */
    private readonly ignoreKeys: readonly string[] = [],
    private readonly fetchFn?: typeof fetch,
    /** A limit of the resource server was reached (`introspections`): counted in toolpacks_limit_hits_total. */
    private readonly onLimit?: (limit: string) => void,
  ) {}

  /**
   * The authenticator of this catalog's `auth:` (its JWKS cache and accepted tokens survive a reload that
   * leaves `auth:` as it was). Looked at once per catalog, not per request.
   */
  private authFor(catalog: Catalog): Authenticator | undefined {
    if (this.current?.catalog === catalog) return this.current.auth;
    const key = JSON.stringify(catalog.auth ?? null);
    let auth = this.current?.auth;
    if (this.current?.key !== key) {
      this.current?.auth?.close();
      auth = catalog.auth
        ? createAuthenticator(catalog.auth, {
            logger: this.logger,
            ...(this.fetchFn ? { fetch: this.fetchFn } : {}),
            ...(this.onLimit ? { onLimit: this.onLimit } : {}),
          })
        : undefined;
    }
    this.current = { catalog, key, auth, gated: gates(catalog) };
    return auth;
  }

  /** Whether `auth:` is on: then the bearer token names the client (per-client limits). */
  on(catalog: Catalog): boolean {
    return this.authFor(catalog) !== undefined;
  }

  /** The paths the protected resource metadata is served at: the root form, the audience's and the MCP path's. */
  isMetadataPath(catalog: Catalog, path: string): boolean {
    const auth = this.authFor(catalog);
    if (!auth?.metadataPaths.length) return false;
    return auth.metadataPaths.includes(path) || path === `${WELL_KNOWN}${this.mcpPath}`;
  }

  /** The protected resource metadata document (public). */
  metadata(catalog: Catalog): unknown {
    return this.authFor(catalog)?.metadata();
  }

  /**
   * Authenticates one request: its principal (undefined when `auth:` is off), or the refusal (401, 400, 503). A
   * 401 asks for `scopes_supported` and the scopes of the gated toolsets the URL names, so the first token
   * already has them.
   */
  async authenticate(
    catalog: Catalog,
    headers: Headers,
    query = "",
  ): Promise<Principal | undefined | WireError> {
    const auth = this.authFor(catalog);
    if (!auth) return undefined;
    const named = this.named(catalog, query);
    const extra = scopesToChallenge(undefined, named);
    const base = catalog.auth?.oauth?.scopes_supported ?? [];
    const r = await auth.authenticate(headers as never, extra.length ? { scopes: [...base, ...extra] } : {});
    return r.ok ? r.principal : refusalOf(r);
  }

  /**
   * Who a request is where a token is optional (the OAuth pages): the principal of a valid `Authorization`
   * value (the request's header, or a token an administrator posted), else undefined.
   */
  async identify(catalog: Catalog, authorization: string | undefined): Promise<Principal | undefined> {
    const auth = this.authFor(catalog);
    if (!auth || !authorization) return undefined;
    const r = await auth.authenticate({ authorization }, {});
    return r.ok ? r.principal : undefined;
  }

  /**
   * Step-up (`auth.oauth.step_up: true`): a URL that names a toolset the principal lacks a scope for gets 403
   * `insufficient_scope` naming the scopes. Claims a new token would not bring, and defaults the URL does not
   * name, never cause it.
   */
  stepUp(catalog: Catalog, principal: Principal | undefined, query: string): WireError | undefined {
    const auth = this.authFor(catalog);
    if (!auth?.stepUp || !principal) return undefined;
    const needed = this.named(catalog, query).filter((r) => !meetsRequirement(principal, r));
    const failure = needed.length ? auth.insufficientScope(principal, needed) : undefined;
    return failure && refusalOf(failure);
  }

  /**
   * A session serves only requests whose token still meets what it was opened with: the requirements of its
   * active gated toolsets. A token with fewer grants gets 403 (`insufficient_scope` with the scopes when scopes
   * would do).
   */
  stillMeets(
    catalog: Catalog,
    principal: Principal | undefined,
    granted: readonly Requires[],
  ): WireError | undefined {
    const auth = this.authFor(catalog);
    const lacking = granted.filter((r) => !meetsRequirement(principal, r));
    if (!auth || !principal || !lacking.length) return undefined;
    return refusalOf(
      auth.insufficientScope(principal, lacking) ?? {
        ok: false,
        status: 403,
        error: "insufficient_scope",
        description: "the token no longer grants what this session was opened with",
        wwwAuthenticate: "",
      },
    );
  }

  private named(catalog: Catalog, query: string): Requires[] {
    if (!query || (this.current?.catalog === catalog && !this.current.gated)) return [];
    const parsed = parseQuery(query, this.ignoreKeys);
    return parsed.ok ? namedRequirements(catalog, parsed.query).map((n) => n.requires) : [];
  }

  close(): void {
    this.current?.auth?.close();
    this.current = undefined;
  }
}

/**
 * A failed authentication as the error table's refusal: the status and challenge RFC 6750 asks for (what
 * clients act on), and a message that says why without quoting the token.
 */
function refusalOf(failure: AuthFailure): WireError {
  const headers: Record<string, string> =
    failure.status === 503
      ? { "retry-after": String(failure.retryAfter) }
      : failure.wwwAuthenticate
        ? { "www-authenticate": failure.wwwAuthenticate }
        : {};
  return errors.authRefused(failure.status, failure.description, headers);
}
