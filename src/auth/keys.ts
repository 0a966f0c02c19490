/** @module The issuer's signing keys: discovered once, cached, refetched for an unknown `kid` at most once per cooldown. */
import type { createLocalJWKSet, JSONWebKeySet, JWSHeaderParameters } from "jose";
import { discover } from "./discovery.js";
import { AuthServerError, displayUrl, fetchJson } from "./fetch-json.js";
import { jose } from "./jose.js";
import type { AuthLogger } from "./types.js";

/** At most one JWKS request per this long, whatever asks (unknown kids, expiry, failures). */
export const JWKS_COOLDOWN_MS = 30_000;
/** Keys older than this are refreshed on the next use (the old ones serve if that fails). */
const JWKS_MAX_AGE_MS = 10 * 60_000;

type KeyResolver = ReturnType<typeof createLocalJWKSet>;
type Key = Awaited<ReturnType<KeyResolver>>;

export interface KeySourceOptions {
  readonly issuer: string;
  readonly jwksUri?: string;
  readonly fetch: typeof fetch;
  readonly now: () => number;
  readonly logger?: AuthLogger;
  readonly closing: AbortSignal;
}

export interface KeySource {
  /** A jose key resolver: the key for this header, refetching once (rate-limited) for an unknown kid. */
  key(header: JWSHeaderParameters): Promise<Key>;
  /** JWKS requests made so far (for tests and metrics). */
  readonly fetches: number;
}

export function createKeySource(o: KeySourceOptions): KeySource {
  let jwksUri: string | undefined = o.jwksUri;
  let keys: { resolve: KeyResolver; at: number } | undefined;
  let lastAttempt = Number.NEGATIVE_INFINITY;
  let lastError: AuthServerError | undefined;
  let inflight: Promise<void> | undefined;
  let fetches = 0;

  async function load(): Promise<void> {
    lastAttempt = o.now();
    try {
      if (!jwksUri) {
        const meta = await discover(o.issuer, o.fetch, o.closing);
        if (!meta.jwks_uri) throw new AuthServerError(`the metadata of ${o.issuer} has no jwks_uri`);
        jwksUri = meta.jwks_uri;
      }
      fetches++;
      const doc = await fetchJson(o.fetch, jwksUri, { headers: { accept: "application/json" } }, o.closing);
      const { createLocalJWKSet } = await jose();
      let resolve: KeyResolver;
      try {
        resolve = createLocalJWKSet(doc as unknown as JSONWebKeySet);
      } catch {
        throw new AuthServerError(`${displayUrl(jwksUri)} is not a JSON Web Key Set`);
      }
      keys = { resolve, at: o.now() };
      lastError = undefined;
    } catch (e) {
      lastError = e instanceof AuthServerError ? e : new AuthServerError("fetching the signing keys failed");
      o.logger?.warn("auth: the authorization server's keys could not be fetched", {
        reason: lastError.message,
      });
      throw lastError;
    }
  }

  /** One load at a time; none within the cooldown of the last (then the last failure, if any, stands). */
  function refresh(): Promise<void> {
    if (inflight) return inflight;
    if (o.now() - lastAttempt < JWKS_COOLDOWN_MS) {
      return lastError && !keys ? Promise.reject(lastError) : Promise.resolve();
    }
    inflight = load().finally(() => {
      inflight = undefined;
    });
    return inflight;
  }

  return {
    get fetches() {
      return fetches;
    },
    async key(header) {
      if (!keys) await refresh();
      else if (o.now() - keys.at > JWKS_MAX_AGE_MS) await refresh().catch(() => {});
      if (!keys) throw lastError ?? new AuthServerError("no signing keys yet");
      const before = keys;
      try {
        return await before.resolve(header);
      } catch (e) {
        if (!(e instanceof (await jose()).errors.JWKSNoMatchingKey)) throw e;
        // An unknown kid: the issuer may have rotated. Ask again, unless we asked recently.
        await refresh();
        if (keys === before) throw e;
        return keys.resolve(header);
      }
    },
  };
}
