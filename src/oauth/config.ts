/**
 * @module Checks an `oauth:` block of an HTTP upstream (after interpolation) into an OAuthUpstreamConfig, with
 * errors at FILE:LINE:COL. The JSON Schema the config layer will hold is in docs/oauth-client.md.
 */
import { type ConfigError, closest } from "../config/errors.js";
import type { Path, Source } from "../config/source.js";
import { isClientMetadataUrl } from "./paths.js";
import type { OAuthUpstreamConfig } from "./types.js";

const KEYS = [
  "mode",
  "grant",
  "client_id",
  "client_secret",
  "issuer",
  "scopes",
  "client_metadata_url",
  "admins",
] as const;

/** An administrator is named by its identity (`identityKey`): the namespace, then the subject in it. */
const IDENTITY = /^(static|oauth):\S.*$/;

function isHttpsOrLoopback(v: string): boolean {
  try {
    const u = new URL(v);
    return (
      u.protocol === "https:" ||
      (u.protocol === "http:" && /^(localhost|127\.[\d.]+|\[::1\])$/.test(u.hostname))
    );
  } catch {
    return false;
  }
}

/** `value` is the interpolated block at `path` in `source` (e.g. ["upstreams", "github", "oauth"]). */
export function checkOAuthConfig(
  value: unknown,
  source: Source,
  path: Path,
): { config?: OAuthUpstreamConfig; errors: ConfigError[] } {
  const errors: ConfigError[] = [];
  const where = path.join(".");
  const err = (p: Path, message: string, hint?: string, key?: boolean) =>
    errors.push(source.error(p, message, hint, key));
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    err(path, `${where} must be a mapping`, "e.g. oauth: { mode: shared }");
    return { errors };
  }
  const o = value as Record<string, unknown>;
  for (const k of Object.keys(o))
    if (!(KEYS as readonly string[]).includes(k)) {
      const guess = closest(k, KEYS);
      err(
        [...path, k],
        `unknown key "${k}" in ${where}`,
        guess ? `did you mean "${guess}"?` : `known keys: ${KEYS.join(", ")}`,
        true,
      );
    }
  const str = (k: string): string | undefined => {
    const v = o[k];
    if (v === undefined) return undefined;
    if (typeof v !== "string" || !v) err([...path, k], `${where}.${k} must be a non-empty string`);
    return typeof v === "string" && v ? v : undefined;
  };
  const mode = o.mode;
  if (mode !== "shared" && mode !== "per-user")
    err(
      mode === undefined ? path : [...path, "mode"],
      `${where}.mode must be "shared" or "per-user"`,
      "shared: one authorization for everyone (toolpacks login); per-user: each signed-in principal authorizes",
    );
  const grant = o.grant ?? "authorization_code";
  if (grant !== "authorization_code" && grant !== "client_credentials")
    err([...path, "grant"], `${where}.grant must be "authorization_code" or "client_credentials"`);
  const clientId = str("client_id");
  const clientSecret = str("client_secret");
  const issuer = str("issuer");
  const metadataUrl = str("client_metadata_url");
  if (clientSecret && !clientId) err([...path, "client_secret"], `${where}.client_secret needs client_id`);
  if (grant === "client_credentials" && (!clientId || !clientSecret))
    err(
      path,
      `${where}: grant client_credentials needs client_id and client_secret`,
      "register the client with the authorization server first",
    );
  if (grant === "client_credentials" && mode === "per-user")
    err(
      [...path, "mode"],
      `${where}: client_credentials is machine to machine, there is no user to act for`,
      "use mode: shared",
    );
  if (issuer && !isHttpsOrLoopback(issuer)) err([...path, "issuer"], `${where}.issuer must be an https URL`);
  if (metadataUrl && !isClientMetadataUrl(metadataUrl))
    err(
      [...path, "client_metadata_url"],
      `${where}.client_metadata_url must be an https URL with a path`,
      "an authorization server only fetches client metadata documents over https",
    );
  let scopes: string[] | undefined;
  if (o.scopes !== undefined) {
    if (
      !Array.isArray(o.scopes) ||
      !o.scopes.every((s) => typeof s === "string" && /^[\x21\x23-\x5b\x5d-\x7e]+$/.test(s))
    )
      err([...path, "scopes"], `${where}.scopes must be a list of scope names (no spaces or quotes)`);
    else scopes = o.scopes as string[];
  }
  const admins = checkAdmins(o.admins, mode, grant, [...path, "admins"], where, err);
  if (errors.length) return { errors };
  return {
    config: {
      mode: mode as OAuthUpstreamConfig["mode"],
      grant: grant as NonNullable<OAuthUpstreamConfig["grant"]>,
      ...(clientId ? { client_id: clientId } : {}),
      ...(clientSecret ? { client_secret: clientSecret } : {}),
      ...(issuer ? { issuer } : {}),
      ...(scopes ? { scopes } : {}),
      ...(metadataUrl ? { client_metadata_url: metadataUrl } : {}),
      ...(admins ? { admins } : {}),
    },
    errors,
  };
}

/** `admins`: identities that may replace a shared grant (whether they exist is checked against `auth:`). */
function checkAdmins(
  value: unknown,
  mode: unknown,
  grant: unknown,
  path: Path,
  where: string,
  err: (p: Path, message: string, hint?: string) => void,
): string[] | undefined {
  if (value === undefined) return undefined;
  if (mode !== "shared") {
    err(path, `${where}.admins applies to mode: shared`, "each per-user principal authorizes its own grant");
    return undefined;
  }
  if (grant === "client_credentials") {
    err(path, `${where}.admins: nobody authorizes a client_credentials grant`, "remove admins");
    return undefined;
  }
  if (!Array.isArray(value)) {
    err(path, `${where}.admins must be a list of identities`, 'e.g. admins: ["static:ops"]');
    return undefined;
  }
  const out: string[] = [];
  value.forEach((a, i) => {
    if (typeof a === "string" && IDENTITY.test(a)) out.push(a);
    else
      err(
        [...path, i],
        `${where}.admins[${i}] must name an identity: static:SUBJECT or oauth:SUB`,
        "static:SUBJECT for a token of auth.tokens with that subject, oauth:SUB for the user of auth.oauth's issuer whose sub it is",
      );
  });
  return out;
}
