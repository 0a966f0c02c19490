/** @module The OAuth client of toolpacks: one per process, holding every upstream's UpstreamAuth and the flows. */
import { assertAuthorizationCodeCapable, checkCallback, startAuthorization } from "./authorize.js";
import type { BearerChallenge } from "./challenge.js";
import { discover } from "./discovery.js";
import { OAuthFlowError } from "./errors.js";
import type { Fetch } from "./http.js";
import { defaultClientMetadataUrl, OAUTH_PATHS } from "./paths.js";
import { type ClientContext, clientFor, refOf, resolveClient } from "./registration.js";
import { scopesFor } from "./scopes.js";
import { CredentialRecords } from "./store/records.js";
import type { Tickets } from "./ticket.js";
import { grantFrom, requestToken, TokenEndpointError } from "./token.js";
import type { Discovery, GrantRecord, OAuthUpstream, TokenStore, UpstreamAuth } from "./types.js";
import { OAuthUpstreamAuth } from "./upstream-auth.js";

export interface OAuthClientOptions {
  readonly store: TokenStore;
  /** The OAuth upstream of that name in the current config (undefined: unknown, or not OAuth). */
  readonly upstream: (name: string) => OAuthUpstream | undefined;
  /**
   * Where the HTTP layer serves `/oauth/*` (e.g. `https://toolpacks.example.com`): authorization URLs handed out
   * point at its start endpoint, and the AS redirects to its callback.
   */
  readonly publicUrl?: string | (() => string);
  /** Instead of `publicUrl`: hand out the AS's URL directly, redirecting here (the CLI's loopback listener). */
  readonly redirectUri?: string;
  readonly fetch?: Fetch;
  /** Epoch ms; injectable for tests. */
  readonly now?: () => number;
  readonly clientName?: string;
  /** UpstreamAuth instances kept (one per upstream and principal); default 10,000. */
  readonly maxInstances?: number;
  /** Authorization URLs handed out carry a ticket for their principal (a browser has no bearer token). */
  readonly tickets?: Tickets;
  /** A new grant was stored for (upstream, principal): instances using it may start again now. Awaited. */
  readonly onAuthorized?: (upstream: string, principal: string) => Promise<void> | void;
}

/** (upstream, principal) → one store key part; shared upstreams have one principal, "". */
function principalOf(up: OAuthUpstream, principal: string | undefined): string {
  if (up.oauth.mode === "shared") return "";
  if (!principal)
    throw new OAuthFlowError("principal", `upstream ${up.name} is per-user: sign in to toolpacks first`);
  return principal;
}

export class OAuthClient {
  readonly records: CredentialRecords;
  readonly fetch: Fetch;
  readonly now: () => number;
  readonly #o: OAuthClientOptions;
  readonly #auths = new Map<string, OAuthUpstreamAuth>();
  /** The resource_metadata URL each upstream last announced, for a start endpoint hit without a challenge. */
  readonly #announced = new Map<string, string>();

  get tickets(): Tickets | undefined {
    return this.#o.tickets;
  }

  /** Where the HTTP layer serves /oauth/* (no trailing slash); undefined for the CLI. */
  get publicUrl(): string | undefined {
    const p = this.#o.publicUrl;
    return (typeof p === "function" ? p() : p)?.replace(/\/$/, "");
  }

  constructor(options: OAuthClientOptions) {
    if (!options.publicUrl && !options.redirectUri)
      throw new OAuthFlowError(
        "config",
        "the OAuth client needs a publicUrl (served) or a redirectUri (CLI)",
      );
    this.#o = options;
    this.records = new CredentialRecords(options.store);
    this.fetch = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
    this.now = options.now ?? Date.now;
  }

  /** The redirect URI the AS sends people back to. */
  get redirectUri(): string {
    return this.#o.redirectUri ?? `${this.publicUrl}${OAUTH_PATHS.callback}`;
  }

  upstream(name: string): OAuthUpstream {
    const up = this.#o.upstream(name);
    if (!up) throw new OAuthFlowError("unknown-upstream", `no upstream ${name} with oauth in the config`);
    return up;
  }

  /** The UpstreamAuth for (upstream, principal); per-user upstreams need a principal, shared ones ignore it. */
  auth(upstream: string, principal?: string): UpstreamAuth {
    const up = this.upstream(upstream);
    const who = principalOf(up, principal);
    const k = JSON.stringify([upstream, who]);
    let a = this.#auths.get(k);
    if (a) this.#auths.delete(k);
    else a = new OAuthUpstreamAuth(this, upstream, who);
    // Most recently used last; past the bound the least recently used is dropped (its grant stays stored).
    this.#auths.set(k, a);
    if (this.#auths.size > (this.#o.maxInstances ?? 10_000))
      this.#auths.delete(this.#auths.keys().next().value!);
    return a;
  }

  /** Discovery from a challenge (or, at a start endpoint, from what the upstream last announced). */
  async discover(up: OAuthUpstream, challenge?: BearerChallenge): Promise<Discovery> {
    if (challenge?.resourceMetadata) this.#announced.set(up.name, challenge.resourceMetadata);
    const remembered = this.#announced.get(up.name);
    const from = challenge ?? (remembered ? { resourceMetadata: remembered } : undefined);
    return discover(this.fetch, up.name, up.url, from, up.oauth.issuer);
  }

  clientContext(up: OAuthUpstream, d: Discovery, redirectUri = this.redirectUri): ClientContext {
    const metadataUrl = defaultClientMetadataUrl(this.publicUrl);
    return {
      fetch: this.fetch,
      records: this.records,
      upstream: up,
      as: d.as,
      redirectUri,
      clientName: this.#o.clientName ?? "toolpacks",
      ...(metadataUrl ? { defaultMetadataUrl: metadataUrl } : {}),
    };
  }

  /** Where a person goes to authorize: the start endpoint when served, else straight to the AS. */
  async authorizeUrl(
    upstream: string,
    principal: string,
    d: Discovery,
    scopes: readonly string[],
  ): Promise<string> {
    if (this.#o.redirectUri) return this.begin(upstream, principal, { discovery: d, scopes });
    const start = new URL(`${this.publicUrl}${OAUTH_PATHS.start(upstream)}`);
    if (scopes.length) start.searchParams.set("scope", scopes.join(" "));
    if (this.#o.tickets) start.searchParams.set("ticket", this.#o.tickets.issue(upstream, principal));
    return start.href;
  }

  /** Starts an authorization code flow and returns the AS's authorization URL (its state is stored). */
  async begin(
    upstream: string,
    principal: string | undefined,
    opts: {
      /** Exactly these scopes (a start URL's `scope`); else chosen from `challenged`, metadata and config. */
      scopes?: readonly string[];
      challenged?: readonly string[];
      binding?: string;
      discovery?: Discovery;
      redirectUri?: string;
    } = {},
  ): Promise<string> {
    const up = this.upstream(upstream);
    if ((up.oauth.grant ?? "authorization_code") !== "authorization_code")
      throw new OAuthFlowError(
        "config",
        `upstream ${upstream} uses the client_credentials grant: nobody authorizes it`,
      );
    const who = principalOf(up, principal);
    const d = opts.discovery ?? (await this.discover(up));
    assertAuthorizationCodeCapable(d.as); // before registering anything there
    const redirectUri = opts.redirectUri ?? this.redirectUri;
    const client = await clientFor(this.clientContext(up, d, redirectUri));
    const previous = (await this.records.grant(upstream, who))?.scopes;
    const scopes =
      opts.scopes ??
      scopesFor(up.oauth, d, {
        ...(opts.challenged ? { challenged: opts.challenged } : {}),
        ...(previous ? { previous } : {}),
      });
    const started = startAuthorization({
      upstream,
      principal: who,
      discovery: d,
      client: refOf(client, redirectUri),
      redirectUri,
      scopes,
      now: this.now(),
      ...(opts.binding ? { binding: opts.binding } : {}),
    });
    await this.records.putPending(started.state, started.pending);
    return started.url;
  }

  /** Completes a flow from its callback's query: state, binding and iss are checked before the code is redeemed. */
  async complete(
    params: URLSearchParams,
    binding?: string,
  ): Promise<{ upstream: string; principal: string }> {
    const state = params.get("state");
    if (!state) throw new OAuthFlowError("state", "the authorization response has no state: refused");
    const pending = await this.records.takePending(state);
    if (!pending)
      throw new OAuthFlowError("state", "unknown or already used authorization state: start again");
    const code = checkCallback(params, pending, this.now(), binding);
    const up = this.upstream(pending.upstream);
    const client = await resolveClient(pending.client, pending.issuer, up, this.records);
    if (!client)
      throw new OAuthFlowError(
        "registration",
        `the client of this authorization of ${up.name} is gone: start again`,
      );
    const form = {
      grant_type: "authorization_code",
      code,
      redirect_uri: pending.redirect_uri,
      code_verifier: pending.code_verifier,
      resource: pending.resource,
    };
    const t = await requestToken(this.fetch, pending.token_endpoint, client, form, "redeeming the code");
    const grant = grantFrom(
      t,
      {
        issuer: pending.issuer,
        token_endpoint: pending.token_endpoint,
        client: pending.client,
        resource: pending.resource,
        grant: "authorization_code",
        scopes: pending.scopes,
      },
      this.now(),
    );
    await this.records.putGrant(up.name, pending.principal, grant);
    this.#auths.get(JSON.stringify([up.name, pending.principal]))?.forget();
    await this.#authorized(up.name, pending.principal);
    return { upstream: up.name, principal: pending.principal };
  }

  /** Tells the serving core; its failure does not undo a stored grant. */
  async #authorized(upstream: string, principal: string): Promise<void> {
    try {
      await this.#o.onAuthorized?.(upstream, principal);
    } catch {}
  }

  /** Uses the refresh token; the rotated one is stored with its access token in one write. */
  async refresh(up: OAuthUpstream, principal: string, grant: GrantRecord): Promise<GrantRecord | undefined> {
    const client = await resolveClient(grant.client, grant.issuer, up, this.records);
    if (!client || !grant.refresh_token) return undefined;
    const params = {
      grant_type: "refresh_token",
      refresh_token: grant.refresh_token,
      resource: grant.resource,
    };
    try {
      const t = await requestToken(this.fetch, grant.token_endpoint, client, params, "refreshing the token");
      const next = grantFrom(t, grant, this.now(), grant.refresh_token);
      await this.records.putGrant(up.name, principal, next);
      return next;
    } catch (err) {
      // invalid_grant: revoked, expired or already used; the grant is gone for good. Other errors: keep it.
      if (err instanceof TokenEndpointError && err.error === "invalid_grant") {
        await this.records.deleteGrant(up.name, principal);
        return undefined;
      }
      throw err;
    }
  }

  /** Machine to machine: a token for the configured client, for this resource. */
  async clientCredentials(
    up: OAuthUpstream,
    principal: string,
    d: Discovery,
    scopes: readonly string[],
  ): Promise<GrantRecord> {
    if (!up.oauth.client_id || !up.oauth.client_secret)
      throw new OAuthFlowError(
        "config",
        `upstream ${up.name}: grant client_credentials needs client_id and client_secret`,
      );
    const client = await clientFor(this.clientContext(up, d));
    const params = {
      grant_type: "client_credentials",
      resource: d.resource,
      ...(scopes.length ? { scope: scopes.join(" ") } : {}),
    };
    const t = await requestToken(
      this.fetch,
      d.as.token_endpoint,
      client,
      params,
      "the client credentials grant",
    );
    const base = {
      issuer: d.as.issuer,
      token_endpoint: d.as.token_endpoint,
      client: refOf(client, this.redirectUri),
      resource: d.resource,
      grant: "client_credentials" as const,
      scopes,
    };
    const grant = grantFrom(t, base, this.now());
    await this.records.putGrant(up.name, principal, grant);
    return grant;
  }
}
