/** @module Grants toolpacks renews by itself: a refresh (rotated tokens stored in one write) and client credentials. */
import { OAuthFlowError } from "./errors.js";
import type { Fetch } from "./http.js";
import { type ClientContext, clientFor, refOf, resolveClient } from "./registration.js";
import type { CredentialRecords } from "./store/records.js";
import { grantFrom, requestToken, TokenEndpointError } from "./token.js";
import type { Discovery, GrantChange, GrantRecord, OAuthUpstream } from "./types.js";

/** What these need of the OAuth client. */
export interface GrantHost {
  readonly fetch: Fetch;
  readonly records: CredentialRecords;
  readonly now: () => number;
  readonly redirectUri: string;
  clientContext(up: OAuthUpstream, d: Discovery): ClientContext;
  /** A grant stored by a person, or dropped: said once, to the log and the audit log. */
  changed(change: GrantChange): void;
}

/** Uses the refresh token; the rotated one is stored with its access token in one write. */
export async function refreshGrant(
  host: GrantHost,
  up: OAuthUpstream,
  principal: string,
  grant: GrantRecord,
): Promise<GrantRecord | undefined> {
  const client = await resolveClient(grant.client, grant.issuer, up, host.records);
  if (!client || !grant.refresh_token) return undefined;
  const params = {
    grant_type: "refresh_token",
    refresh_token: grant.refresh_token,
    resource: grant.resource,
  };
  try {
    const t = await requestToken(host.fetch, grant.token_endpoint, client, params, "refreshing the token");
    const next = grantFrom(t, grant, host.now(), grant.refresh_token);
    await host.records.putGrant(up.name, principal, next);
    return next;
  } catch (err) {
    // invalid_grant: revoked, expired or already used; the grant is gone for good. Other errors: keep it.
    if (err instanceof TokenEndpointError && err.error === "invalid_grant") {
      await dropGrant(
        host,
        up,
        principal,
        "the authorization server refused its refresh token (invalid_grant)",
      );
      return undefined;
    }
    throw err;
  }
}

/** A grant that no longer works is deleted (the next 401 asks for a new authorization), and that is said. */
export async function dropGrant(
  host: GrantHost,
  up: OAuthUpstream,
  principal: string,
  reason: string,
): Promise<void> {
  await host.records.deleteGrant(up.name, principal);
  if (up.oauth.grant !== "client_credentials")
    host.changed({
      upstream: up.name,
      mode: up.oauth.mode,
      action: "dropped",
      principal,
      via: "toolpacks",
      reason,
    });
}

/** Machine to machine: a token for the configured client, for this resource. */
export async function clientCredentialsGrant(
  host: GrantHost,
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
  const client = await clientFor(host.clientContext(up, d));
  const params = {
    grant_type: "client_credentials",
    resource: d.resource,
    ...(scopes.length ? { scope: scopes.join(" ") } : {}),
  };
  const t = await requestToken(
    host.fetch,
    d.as.token_endpoint,
    client,
    params,
    "the client credentials grant",
  );
  const base = {
    issuer: d.as.issuer,
    token_endpoint: d.as.token_endpoint,
    client: refOf(client, host.redirectUri),
    resource: d.resource,
    grant: "client_credentials" as const,
    scopes,
  };
  const grant = grantFrom(t, base, host.now());
  await host.records.putGrant(up.name, principal, grant);
  return grant;
}
