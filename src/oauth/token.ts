/** @module Token endpoint requests (authorization_code, refresh_token, client_credentials) and the grants they yield. */
import { OAuthFlowError } from "./errors.js";
import { type Fetch, oauthErrorText, postForJson } from "./http.js";
import type { ClientRecord, GrantRecord } from "./types.js";

export interface TokenResponse {
  readonly access_token: string;
  readonly refresh_token?: string;
  readonly expires_in?: number;
  readonly scope?: string;
}

/** Client authentication at the token endpoint (RFC 6749 §2.3.1): credentials form-encoded inside Basic. */
function authenticate(client: ClientRecord, body: URLSearchParams): Record<string, string> {
  const secret = client.client_secret;
  if (client.token_endpoint_auth_method === "client_secret_basic" && secret !== undefined) {
    const pair = `${encodeURIComponent(client.client_id)}:${encodeURIComponent(secret)}`;
    return { authorization: `Basic ${Buffer.from(pair).toString("base64")}` };
  }
  body.set("client_id", client.client_id);
  if (client.token_endpoint_auth_method === "client_secret_post" && secret !== undefined)
    body.set("client_secret", secret);
  return {};
}

/** Raised for an AS answer like `invalid_grant`, so a caller can tell "start over" from "try later". */
export class TokenEndpointError extends OAuthFlowError {
  constructor(
    readonly error: string | undefined,
    message: string,
  ) {
    super("token", message);
  }
}

export async function requestToken(
  fetch: Fetch,
  tokenEndpoint: string,
  client: ClientRecord,
  params: Record<string, string>,
  what: string,
): Promise<TokenResponse> {
  const body = new URLSearchParams(params);
  const headers = { "content-type": "application/x-www-form-urlencoded", ...authenticate(client, body) };
  const r = await postForJson(fetch, tokenEndpoint, body, headers);
  const secrets = [...Object.values(params), client.client_secret];
  if (!r.ok) {
    const error = typeof r.json?.error === "string" ? r.json.error : undefined;
    throw new TokenEndpointError(error, `${what} at ${tokenEndpoint} failed: ${oauthErrorText(r, secrets)}`);
  }
  const j = r.json;
  if (typeof j.access_token !== "string" || !j.access_token)
    throw new OAuthFlowError("token", `${what}: the token endpoint's answer has no access_token`);
  if (typeof j.token_type !== "string" || j.token_type.toLowerCase() !== "bearer")
    throw new OAuthFlowError("token", `${what}: token_type must be Bearer`);
  const expires = typeof j.expires_in === "string" ? Number(j.expires_in) : j.expires_in;
  return {
    access_token: j.access_token,
    ...(typeof j.refresh_token === "string" && j.refresh_token ? { refresh_token: j.refresh_token } : {}),
    ...(typeof expires === "number" && Number.isFinite(expires) && expires > 0
      ? { expires_in: expires }
      : {}),
    ...(typeof j.scope === "string" ? { scope: j.scope } : {}),
  };
}

/** The grant to store from a token answer; a refresh answer without a new refresh token keeps the old one. */
export function grantFrom(
  t: TokenResponse,
  base: Pick<GrantRecord, "issuer" | "token_endpoint" | "client" | "resource" | "grant" | "scopes">,
  now: number,
  previousRefresh?: string,
): GrantRecord {
  const refresh = t.refresh_token ?? previousRefresh;
  return {
    ...base,
    access_token: t.access_token,
    ...(refresh ? { refresh_token: refresh } : {}),
    ...(t.expires_in !== undefined ? { expires_at: now + t.expires_in * 1000 } : {}),
    obtained_at: now,
  };
}
