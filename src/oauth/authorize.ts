/** @module The authorization request (PKCE S256, state, resource) and the checks on its response (state, RFC 9207 iss). */
import { createHash, randomBytes } from "node:crypto";
import { OAuthFlowError, remoteText } from "./errors.js";
import type { AuthServerMetadata, ClientRef, Discovery, PendingRecord } from "./types.js";

/** How long a started authorization may take before its callback is refused. */
const PENDING_TTL_MS = 10 * 60_000;

export const sha256Hex = (s: string) => createHash("sha256").update(s).digest("hex");
const random = () => randomBytes(32).toString("base64url");

/** Refuses an AS that cannot do what the flow needs: an authorization endpoint and PKCE with S256. */
export function assertAuthorizationCodeCapable(as: AuthServerMetadata): string {
  if (!as.authorization_endpoint)
    throw new OAuthFlowError("metadata", `authorization server ${as.issuer} has no authorization_endpoint`);
  // The MCP spec: no code_challenge_methods_supported means no PKCE, and the client must refuse to proceed.
  if (!as.code_challenge_methods_supported?.includes("S256"))
    throw new OAuthFlowError(
      "metadata",
      `authorization server ${as.issuer} does not advertise PKCE with S256 (code_challenge_methods_supported): refusing to authorize`,
    );
  return as.authorization_endpoint;
}

export interface StartedAuthorization {
  /** The AS's authorization URL to send a person to. */
  readonly url: string;
  readonly state: string;
  readonly pending: PendingRecord;
}

/** Builds the authorization URL and the record that the callback will be checked against. */
export function startAuthorization(input: {
  readonly upstream: string;
  readonly principal: string;
  readonly discovery: Discovery;
  readonly client: ClientRef;
  readonly redirectUri: string;
  readonly scopes: readonly string[];
  readonly now: number;
  readonly binding?: string;
}): StartedAuthorization {
  const { discovery: d, client } = input;
  const endpoint = assertAuthorizationCodeCapable(d.as);
  const state = random();
  const verifier = random();
  const url = new URL(endpoint);
  const q = url.searchParams;
  q.set("response_type", "code");
  q.set("client_id", client.client_id);
  q.set("redirect_uri", input.redirectUri);
  q.set("state", state);
  q.set("code_challenge", createHash("sha256").update(verifier).digest("base64url"));
  q.set("code_challenge_method", "S256");
  q.set("resource", d.resource);
  if (input.scopes.length) q.set("scope", input.scopes.join(" "));
  // OpenID providers drop offline_access unless consent is prompted (OIDC Core §11).
  if (input.scopes.includes("offline_access")) q.set("prompt", "consent");
  const pending: PendingRecord = {
    upstream: input.upstream,
    principal: input.principal,
    issuer: d.as.issuer,
    iss_supported: d.as.authorization_response_iss_parameter_supported === true,
    token_endpoint: d.as.token_endpoint,
    client,
    redirect_uri: input.redirectUri,
    code_verifier: verifier,
    resource: d.resource,
    scopes: input.scopes,
    expires_at: input.now + PENDING_TTL_MS,
    ...(input.binding ? { binding: sha256Hex(input.binding) } : {}),
  };
  return { url: url.href, state, pending };
}

/**
 * RFC 9207 §2.4 as the MCP spec tabulates it: a present `iss` must equal the recorded issuer by simple string
 * comparison (no normalization); an absent one is refused only when the AS advertised the parameter.
 */
export function checkIssuer(iss: string | null, pending: PendingRecord): void {
  if (iss === null) {
    if (pending.iss_supported)
      throw new OAuthFlowError(
        "iss",
        `the authorization response has no iss although ${pending.issuer} advertises it: refused`,
      );
    return;
  }
  if (iss !== pending.issuer)
    throw new OAuthFlowError(
      "iss",
      `the authorization response comes from issuer ${remoteText(iss)}, not ${pending.issuer}: refused (possible mix-up attack)`,
    );
}

/** Checks a callback against its pending record; returns the code to redeem. Never echoes the code. */
export function checkCallback(
  params: URLSearchParams,
  pending: PendingRecord,
  now: number,
  binding?: string,
): string {
  if (pending.expires_at < now)
    throw new OAuthFlowError("state", "this authorization took too long and expired: start again");
  if (pending.binding && (!binding || sha256Hex(binding) !== pending.binding))
    throw new OAuthFlowError(
      "state",
      "this authorization was started in another browser: start it again here",
    );
  checkIssuer(params.get("iss"), pending);
  const error = params.get("error");
  if (error) {
    const description = remoteText(params.get("error_description"));
    throw new OAuthFlowError(
      "authorization",
      `authorization server ${pending.issuer} refused: ${remoteText(error)}${description ? ` (${description})` : ""}`,
    );
  }
  const code = params.get("code");
  if (!code) throw new OAuthFlowError("authorization", "the authorization response has no code");
  return code;
}
