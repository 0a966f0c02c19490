/**
 * @module The authorization code flow's two ends: making a flow (discovery, the client, the scopes, PKCE) and
 * completing it at its callback (state, browser binding, iss, who may still store it, then the code redeemed).
 * A shared grant is replaced only by a flow an administrator started (or `toolpacks login`, the operator).
 */
import { assertAuthorizationCodeCapable, checkCallback, startAuthorization } from "./authorize.js";
import { OAuthFlowError } from "./errors.js";
import type { NewFlow } from "./flows.js";
import type { GrantHost } from "./grants.js";
import { type ClientContext, clientFor, refOf, resolveClient } from "./registration.js";
import { scopesFor } from "./scopes.js";
import { grantFrom, requestToken } from "./token.js";
import type { Discovery, OAuthUpstream, PendingRecord } from "./types.js";

/** What making and completing a flow need of the OAuth client. */
export interface FlowHost extends GrantHost {
  /** Served (a start page made the flow), as opposed to the CLI's `toolpacks login`. */
  readonly served: boolean;
  upstream(name: string): OAuthUpstream;
  discover(up: OAuthUpstream): Promise<Discovery>;
  clientContext(up: OAuthUpstream, d: Discovery, redirectUri?: string): ClientContext;
}

export interface FlowOptions {
  /** Exactly these scopes (a start URL's `scope`); else chosen from `challenged`, metadata and config. */
  readonly scopes?: readonly string[];
  readonly challenged?: readonly string[];
  /** The nonce of the browser-binding cookie. */
  readonly binding?: string;
  /** Who started it (the identity the start page proved). */
  readonly by?: string;
  readonly discovery?: Discovery;
  readonly redirectUri?: string;
}

/** May `by` replace the grant everyone uses through the start page? Only an identity `admins` names. */
export function isAdmin(up: OAuthUpstream, by: string | undefined): boolean {
  return by !== undefined && (up.oauth.admins ?? []).includes(by);
}

/** The store key part of (upstream, principal): "" for a shared upstream; a per-user one needs a principal. */
export function principalOf(up: OAuthUpstream, principal: string | undefined): string {
  if (up.oauth.mode === "shared") return "";
  if (!principal)
    throw new OAuthFlowError("principal", `upstream ${up.name} is per-user: sign in to toolpacks first`);
  return principal;
}

/** A new flow: its authorization URL and the record its callback is checked against (not stored yet). */
export async function makeFlow(
  host: FlowHost,
  upstream: string,
  principal: string | undefined,
  opts: FlowOptions,
): Promise<NewFlow> {
  const up = host.upstream(upstream);
  if ((up.oauth.grant ?? "authorization_code") !== "authorization_code")
    throw new OAuthFlowError(
      "config",
      `upstream ${upstream} uses the client_credentials grant: nobody authorizes it`,
    );
  const who = principalOf(up, principal);
  const d = opts.discovery ?? (await host.discover(up));
  assertAuthorizationCodeCapable(d.as); // before registering anything there
  const redirectUri = opts.redirectUri ?? host.redirectUri;
  const client = await clientFor(host.clientContext(up, d, redirectUri));
  const previous = (await host.records.grant(upstream, who))?.scopes;
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
    now: host.now(),
    ...(opts.binding ? { binding: opts.binding } : {}),
  });
  const pending: PendingRecord = { ...started.pending, ...(opts.by !== undefined ? { by: opts.by } : {}) };
  return { url: started.url, state: started.state, pending };
}

/**
 * Completes a flow the callback's query names: state, binding and iss checked, and (served) that whoever started
 * it may still store it, before the code is redeemed. `taken` hears of every flow found, whatever came of it.
 */
export async function completeFlow(
  host: FlowHost,
  params: URLSearchParams,
  binding: string | undefined,
  taken: (pending: PendingRecord) => Promise<void>,
): Promise<{ upstream: string; principal: string; by?: string }> {
  const state = params.get("state");
  if (!state) throw new OAuthFlowError("state", "the authorization response has no state: refused");
  const pending = await host.records.takePending(state);
  if (!pending) throw new OAuthFlowError("state", "unknown or already used authorization state: start again");
  await taken(pending);
  const code = checkCallback(params, pending, host.now(), binding);
  const up = host.upstream(pending.upstream);
  if (host.served) mayStore(up, pending);
  const client = await resolveClient(pending.client, pending.issuer, up, host.records);
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
  const t = await requestToken(host.fetch, pending.token_endpoint, client, form, "redeeming the code");
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
    host.now(),
  );
  await host.records.putGrant(up.name, pending.principal, grant);
  host.changed({
    upstream: up.name,
    mode: up.oauth.mode,
    action: "authorized",
    principal: pending.principal,
    ...(pending.by !== undefined ? { by: pending.by } : {}),
    via: host.served ? "page" : "login",
  });
  return {
    upstream: up.name,
    principal: pending.principal,
    ...(pending.by !== undefined ? { by: pending.by } : {}),
  };
}

/**
 * A served callback stores only what a start page began: a shared grant for an identity the config (as it is
 * now: a reload may have removed it) names in `admins`, a per-user grant for the principal that started it.
 */
function mayStore(up: OAuthUpstream, pending: PendingRecord): void {
  if (up.oauth.mode === "shared" ? isAdmin(up, pending.by) : pending.by === pending.principal) return;
  throw new OAuthFlowError(
    "forbidden",
    up.oauth.mode === "shared"
      ? `this authorization was not started by an administrator of ${up.name} (oauth.admins): nothing was stored`
      : `this authorization was started for someone else: nothing was stored`,
  );
}
