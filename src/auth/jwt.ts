/** @module JWT access tokens (RFC 9068) verified locally with jose: signature, iss, aud, exp/nbf, alg, typ. */
import type { errors as Errors, JWTVerifyOptions, JWTVerifyResult } from "jose";
import { principalFromClaims } from "./claims.js";
import { AuthServerError } from "./fetch-json.js";
import { jose } from "./jose.js";
import type { KeySource } from "./keys.js";
import type { Principal } from "./types.js";

/** Tolerated clock difference with the issuer, in seconds, for `exp` and `nbf`. */
export const CLOCK_SKEW_S = 30;

/** Every asymmetric JWS algorithm jose verifies. Never `none`, never HS* (a public key is no secret). */
export const DEFAULT_ALGORITHMS: readonly string[] = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
];

/** `typ` values an access token may carry: RFC 9068's, and the generic ones many issuers still send. */
const ACCEPTED_TYP = new Set(["at+jwt", "application/at+jwt", "jwt", "application/jwt"]);

export type Verdict =
  | { readonly ok: true; readonly principal: Principal; readonly expiresAt?: number }
  | {
      readonly ok: false;
      readonly unavailable: boolean;
      readonly description: string;
      /** Unavailable: seconds until trying again makes sense (default: the JWKS cooldown). */
      readonly retryAfter?: number;
    };

const refuse = (description: string): Verdict => ({ ok: false, unavailable: false, description });

/** Three base64url parts, the first a JSON object with a string `alg`: a JWS, so not an opaque token. */
export function looksLikeJwt(token: string): boolean {
  const parts = token.split(".");
  if (parts.length !== 3 || !/^[A-Za-z0-9_-]+$/.test(parts[0]!)) return false;
  try {
    const header: unknown = JSON.parse(Buffer.from(parts[0]!, "base64url").toString("utf8"));
    return (
      typeof header === "object" && header !== null && typeof (header as { alg?: unknown }).alg === "string"
    );
  } catch {
    return false;
  }
}

export interface JwtCheck {
  readonly issuer: string;
  readonly audience: string;
  readonly algorithms: readonly string[];
  readonly keys: KeySource;
  readonly now: () => number;
}

export async function verifyJwt(token: string, c: JwtCheck): Promise<Verdict> {
  const options: JWTVerifyOptions = {
    issuer: c.issuer,
    audience: c.audience,
    algorithms: [...c.algorithms],
    clockTolerance: CLOCK_SKEW_S,
    currentDate: new Date(c.now()),
  };
  const { errors, jwtVerify } = await jose();
  let result: JWTVerifyResult;
  try {
    result = await jwtVerify(token, (header) => c.keys.key(header), options);
  } catch (e) {
    if (!(e instanceof errors.JWKSMultipleMatchingKeys)) return verdictOf(e, errors);
    // Several published keys fit the header (no kid): the one whose signature verifies is the key.
    const found = await tryEach(token, e, options, await jose());
    if (!found.ok) return found.verdict;
    result = found.result;
  }
  const typ = result.protectedHeader.typ;
  if (typ !== undefined && !ACCEPTED_TYP.has(typ.toLowerCase())) {
    return refuse("the token is not an access token (typ)");
  }
  const principal = principalFromClaims(result.payload, "jwt");
  if (!principal) return refuse("the token names no subject (sub)");
  return {
    ok: true,
    principal,
    ...(typeof result.payload.exp === "number" ? { expiresAt: result.payload.exp * 1000 } : {}),
  };
}

async function tryEach(
  token: string,
  candidates: Errors.JWKSMultipleMatchingKeys,
  options: JWTVerifyOptions,
  { errors, jwtVerify }: Awaited<ReturnType<typeof jose>>,
): Promise<{ ok: true; result: JWTVerifyResult } | { ok: false; verdict: Verdict }> {
  let last: unknown = candidates;
  for await (const key of candidates) {
    try {
      return { ok: true, result: await jwtVerify(token, key, options) };
    } catch (e) {
      last = e;
      if (!(e instanceof errors.JWSSignatureVerificationFailed)) break;
    }
  }
  return { ok: false, verdict: verdictOf(last, errors) };
}

/** A jose (or fetch) failure as a description that quotes nothing from the token. */
function verdictOf(e: unknown, errors: typeof Errors): Verdict {
  if (e instanceof AuthServerError) {
    return {
      ok: false,
      unavailable: true,
      description: "the authorization server's keys cannot be fetched now",
    };
  }
  if (e instanceof errors.JWTExpired) return refuse("the token has expired");
  if (e instanceof errors.JWTClaimValidationFailed) {
    if (e.reason === "missing") return refuse(`the token has no ${e.claim} claim`);
    switch (e.claim) {
      case "iss":
        return refuse("the token was issued by another issuer");
      case "aud":
        return refuse("the token was issued for another resource (aud)");
      case "nbf":
        return refuse("the token is not valid yet (nbf)");
      default:
        return refuse(`the token's ${e.claim} claim is invalid`);
    }
  }
  if (e instanceof errors.JOSEAlgNotAllowed) return refuse("the token's signing algorithm is not accepted");
  if (e instanceof errors.JWSSignatureVerificationFailed)
    return refuse("the token's signature does not verify");
  if (e instanceof errors.JWKSNoMatchingKey || e instanceof errors.JWKSMultipleMatchingKeys) {
    return refuse("the token is signed with a key the issuer does not publish");
  }
  if (e instanceof errors.JOSEError) return refuse("the token is malformed");
  return refuse("the token could not be verified");
}
