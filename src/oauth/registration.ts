/**
 * @module Client registration in the spec's order: a pre-registered client from the config, else a Client ID
 * Metadata Document (when the AS supports it and the URL is https), else Dynamic Client Registration (RFC 7591).
 */
import { OAuthFlowError } from "./errors.js";
import { type Fetch, isLoopback, oauthErrorText, postForJson } from "./http.js";
import { isClientMetadataUrl } from "./paths.js";
import type { SingleFlight } from "./single-flight.js";
import type { CredentialRecords } from "./store/records.js";
import type {
  AuthServerMetadata,
  ClientRecord,
  ClientRef,
  OAuthUpstream,
  TokenEndpointAuthMethod,
} from "./types.js";

/** Registrations are per redirect URI; every loopback port shares one (the AS must ignore the port, RFC 8252). */
export function redirectSlot(redirectUri: string): string {
  const u = new URL(redirectUri);
  return u.protocol === "http:" && isLoopback(u.hostname) ? `loopback${u.pathname}` : redirectUri;
}

/** How to authenticate at the token endpoint, per the AS's list (RFC 8414 default: client_secret_basic). */
export function chooseAuthMethod(as: AuthServerMetadata, hasSecret: boolean): TokenEndpointAuthMethod {
  const supported = as.token_endpoint_auth_methods_supported ?? ["client_secret_basic"];
  if (!hasSecret) return "none";
  if (supported.includes("client_secret_basic")) return "client_secret_basic";
  if (supported.includes("client_secret_post")) return "client_secret_post";
  return "client_secret_basic";
}

export interface ClientContext {
  readonly fetch: Fetch;
  readonly records: CredentialRecords;
  readonly upstream: OAuthUpstream;
  readonly as: AuthServerMetadata;
  readonly redirectUri: string;
  /** The CIMD URL toolpacks serves, when there is an https one. */
  readonly defaultMetadataUrl?: string;
  readonly clientName: string;
  /** Registrations under way (by issuer and redirect slot), so concurrent flows register once. */
  readonly registering?: SingleFlight<ClientRecord>;
}

/** The pre-registered client, bound to its issuer when the config names one. */
function configured(ctx: ClientContext): ClientRecord | undefined {
  const o = ctx.upstream.oauth;
  if (!o.client_id) return undefined;
  if (o.issuer !== undefined && o.issuer !== ctx.as.issuer)
    throw new OAuthFlowError(
      "registration",
      `upstream ${ctx.upstream.name}'s pre-registered client belongs to ${o.issuer}, but the upstream now names ${ctx.as.issuer}: update oauth.issuer and the client, or remove them to register anew`,
    );
  return {
    issuer: ctx.as.issuer,
    client_id: o.client_id,
    ...(o.client_secret ? { client_secret: o.client_secret } : {}),
    token_endpoint_auth_method: chooseAuthMethod(ctx.as, o.client_secret !== undefined),
    redirect_uris: [ctx.redirectUri],
    source: "config",
  };
}

function metadataDocument(ctx: ClientContext): ClientRecord | undefined {
  const url = ctx.upstream.oauth.client_metadata_url ?? ctx.defaultMetadataUrl;
  if (ctx.as.client_id_metadata_document_supported !== true || !isClientMetadataUrl(url)) return undefined;
  return {
    issuer: ctx.as.issuer,
    client_id: url,
    token_endpoint_auth_method: "none",
    redirect_uris: [ctx.redirectUri],
    source: "metadata-document",
  };
}

/** The client to use without registering anything new (also what a callback uses to redeem its code). */
async function knownClient(ctx: ClientContext): Promise<ClientRecord | undefined> {
  return (
    configured(ctx) ??
    metadataDocument(ctx) ??
    (await ctx.records.client(ctx.as.issuer, redirectSlot(ctx.redirectUri)))
  );
}

async function register(ctx: ClientContext): Promise<ClientRecord> {
  const { as } = ctx;
  if (!as.registration_endpoint)
    throw new OAuthFlowError(
      "registration",
      `authorization server ${as.issuer} offers neither client metadata documents nor dynamic registration: set oauth.client_id (and client_secret) for upstream ${ctx.upstream.name}`,
    );
  const supported = as.token_endpoint_auth_methods_supported ?? ["client_secret_basic"];
  const method: TokenEndpointAuthMethod =
    (["client_secret_basic", "client_secret_post", "none"] as const).find((m) => supported.includes(m)) ??
    "client_secret_basic";
  const loopback = redirectSlot(ctx.redirectUri).startsWith("loopback");
  const body = {
    client_name: ctx.clientName,
    redirect_uris: [ctx.redirectUri],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: method,
    // OIDC registration defaults to "web", which refuses loopback http redirects: a CLI is a native app.
    application_type: loopback ? "native" : "web",
  };
  const r = await postForJson(ctx.fetch, as.registration_endpoint, JSON.stringify(body), {
    "content-type": "application/json",
  });
  if (!r.ok)
    throw new OAuthFlowError(
      "registration",
      `dynamic client registration at ${as.registration_endpoint} failed: ${oauthErrorText(r)}`,
    );
  const j = r.json;
  if (typeof j.client_id !== "string" || !j.client_id)
    throw new OAuthFlowError("registration", `${as.registration_endpoint} answered without a client_id`);
  const secret = typeof j.client_secret === "string" && j.client_secret ? j.client_secret : undefined;
  const answered = j.token_endpoint_auth_method;
  const auth: TokenEndpointAuthMethod =
    answered === "client_secret_basic" || answered === "client_secret_post" || answered === "none"
      ? answered
      : secret
        ? method === "none"
          ? "client_secret_basic"
          : method
        : "none";
  const record: ClientRecord = {
    issuer: as.issuer,
    client_id: j.client_id,
    ...(secret ? { client_secret: secret } : {}),
    token_endpoint_auth_method: auth,
    redirect_uris: [ctx.redirectUri],
    source: "registered",
  };
  await ctx.records.putClient(redirectSlot(ctx.redirectUri), record);
  return record;
}

/** The client for an authorization: reuses what is known for this issuer, registers only as a last resort. */
export async function clientFor(ctx: ClientContext): Promise<ClientRecord> {
  const known = await knownClient(ctx);
  if (known) return known;
  if (!ctx.registering) return register(ctx);
  const key = JSON.stringify([ctx.as.issuer, redirectSlot(ctx.redirectUri)]);
  // Looked up again inside: a registration that finished meanwhile (here or in another process) is reused.
  return ctx.registering.run(key, async () => (await knownClient(ctx)) ?? register(ctx));
}

/** How a grant or flow refers to a client. */
export function refOf(client: ClientRecord, redirectUri: string): ClientRef {
  return {
    source: client.source,
    client_id: client.client_id,
    method: client.token_endpoint_auth_method,
    ...(client.source === "registered" ? { slot: redirectSlot(redirectUri) } : {}),
  };
}

/** The client a stored grant or flow names, if it is still the one configured or registered; else undefined. */
export async function resolveClient(
  ref: ClientRef,
  issuer: string,
  upstream: OAuthUpstream,
  records: CredentialRecords,
): Promise<ClientRecord | undefined> {
  const base = {
    issuer,
    client_id: ref.client_id,
    token_endpoint_auth_method: ref.method,
    redirect_uris: [],
  };
  if (ref.source === "metadata-document") return { ...base, source: ref.source };
  if (ref.source === "config") {
    const o = upstream.oauth;
    if (o.client_id !== ref.client_id || (o.issuer !== undefined && o.issuer !== issuer)) return undefined;
    return { ...base, ...(o.client_secret ? { client_secret: o.client_secret } : {}), source: ref.source };
  }
  const stored = ref.slot ? await records.client(issuer, ref.slot) : undefined;
  return stored?.client_id === ref.client_id ? stored : undefined;
}
