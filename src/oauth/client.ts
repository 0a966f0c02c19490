/** @module The OAuth client of toolpacks: one per process, holding every upstream's UpstreamAuth and the flows. */
import type { BearerChallenge } from "./challenge.js";
import { discover } from "./discovery.js";
import { OAuthFlowError } from "./errors.js";
import { completeFlow, type FlowHost, type FlowOptions, makeFlow, principalOf } from "./flow.js";
import { type FlowLimits, FlowsInProgress, type OpenedFlow } from "./flows.js";
import { clientCredentialsGrant, dropGrant, refreshGrant } from "./grants.js";
import type { Fetch } from "./http.js";
import { defaultClientMetadataUrl, OAUTH_PATHS } from "./paths.js";
import type { ClientContext } from "./registration.js";
import { SingleFlight } from "./single-flight.js";
import { CredentialRecords } from "./store/records.js";
import type { Tickets } from "./ticket.js";
import type {
  ClientRecord,
  Discovery,
  GrantChange,
  GrantRecord,
  OAuthUpstream,
  TokenStore,
  UpstreamAuth,
} from "./types.js";
import { OAuthUpstreamAuth } from "./upstream-auth.js";

/** How long what an upstream's metadata says is trusted before it is read again. */
const DISCOVERY_TTL_MS = 5 * 60_000;

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
  /** A person's grant stored, or a grant dropped: for the log and the audit log. */
  readonly onGrant?: (change: GrantChange) => void;
  /** Flows in progress per owner and in total (default 5 and 1,000). */
  readonly flowLimits?: FlowLimits;
}

export class OAuthClient implements FlowHost {
  readonly records: CredentialRecords;
  readonly fetch: Fetch;
  readonly now: () => number;
  readonly flows: FlowsInProgress;
  readonly #o: OAuthClientOptions;
  readonly #auths = new Map<string, OAuthUpstreamAuth>();
  /** The resource_metadata URL each upstream last announced, for a start endpoint hit without a challenge. */
  readonly #announced = new Map<string, string>();
  readonly #discoveries: SingleFlight<Discovery>;
  /** Registrations under way, by issuer and redirect slot: concurrent flows register once. */
  readonly #registering = new SingleFlight<ClientRecord>(0);

  get tickets(): Tickets | undefined {
    return this.#o.tickets;
  }

  /** Where the HTTP layer serves /oauth/* (no trailing slash); undefined for the CLI. */
  get publicUrl(): string | undefined {
    const p = this.#o.publicUrl;
    return (typeof p === "function" ? p() : p)?.replace(/\/$/, "");
  }

  /** Flows are made by the start page (served), as opposed to `toolpacks login` (the CLI, the operator). */
  get served(): boolean {
    return !this.#o.redirectUri;
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
    this.#discoveries = new SingleFlight(DISCOVERY_TTL_MS, this.now);
    this.flows = new FlowsInProgress(this.records, this.now, options.flowLimits);
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

  /**
   * Discovery from a challenge (or, at a start endpoint, from what the upstream last announced): one at a time per
   * upstream and metadata URL, its answer kept DISCOVERY_TTL_MS (for start pages), a failure not kept. `fresh`
   * (an upstream's 401: its authorization server may have moved) reads the metadata again.
   */
  async discover(up: OAuthUpstream, challenge?: BearerChallenge, fresh = false): Promise<Discovery> {
    if (challenge?.resourceMetadata) this.#announced.set(up.name, challenge.resourceMetadata);
    const remembered = this.#announced.get(up.name);
    const from = challenge ?? (remembered ? { resourceMetadata: remembered } : undefined);
    const key = JSON.stringify([up.name, up.url, from?.resourceMetadata ?? null, up.oauth.issuer ?? null]);
    return this.#discoveries.run(
      key,
      () => discover(this.fetch, up.name, up.url, from, up.oauth.issuer),
      fresh,
    );
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
      registering: this.#registering,
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
  async begin(upstream: string, principal: string | undefined, opts: FlowOptions = {}): Promise<string> {
    const flow = await makeFlow(this, upstream, principal, opts);
    await this.records.putPending(flow.state, flow.pending);
    return flow.url;
  }

  /**
   * The flow of a start page's `link` (a ticket, or who proved itself and what it asked for): made once, found
   * again by every later open of the same link, within the bounds on flows in progress; `owner` is who started it.
   */
  start(
    link: string,
    upstream: string,
    principal: string | undefined,
    owner: string,
    opts: Omit<FlowOptions, "binding" | "by"> = {},
  ): Promise<OpenedFlow> {
    return this.flows.open(link, owner, (nonce) =>
      makeFlow(this, upstream, principal, { ...opts, binding: nonce, by: owner }),
    );
  }

  /** Completes a flow from its callback's query: state, binding and iss are checked before the code is redeemed. */
  async complete(
    params: URLSearchParams,
    binding?: string,
  ): Promise<{ upstream: string; principal: string; by?: string }> {
    const done = await completeFlow(this, params, binding, (p) => this.flows.settled(p, p.by ?? p.principal));
    this.#auths.get(JSON.stringify([done.upstream, done.principal]))?.forget();
    // The serving core's part; its failure does not undo a stored grant.
    await (async () => this.#o.onAuthorized?.(done.upstream, done.principal))().catch(() => {});
    return done;
  }

  changed(change: GrantChange): void {
    try {
      this.#o.onGrant?.(change);
    } catch {}
  }

  refresh(up: OAuthUpstream, principal: string, grant: GrantRecord): Promise<GrantRecord | undefined> {
    return refreshGrant(this, up, principal, grant);
  }

  dropGrant(up: OAuthUpstream, principal: string, reason: string): Promise<void> {
    return dropGrant(this, up, principal, reason);
  }

  clientCredentials(
    up: OAuthUpstream,
    principal: string,
    d: Discovery,
    scopes: readonly string[],
  ): Promise<GrantRecord> {
    return clientCredentialsGrant(this, up, principal, d, scopes);
  }
}
