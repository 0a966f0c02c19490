/** @module Opaque tokens checked by RFC 7662 introspection; active answers cached until the token's exp, bounded. */
import { createHash } from "node:crypto";
import { claimValues, principalFromClaims } from "./claims.js";
import { AuthServerError, fetchJson } from "./fetch-json.js";
import { CLOCK_SKEW_S, type Verdict } from "./jwt.js";
import type { AuthLogger, IntrospectionConfig } from "./types.js";

/** Cached active tokens at most; the oldest entry goes first. */
export const INTROSPECTION_CACHE_MAX = 10_000;

export interface IntrospectorOptions {
  readonly config: IntrospectionConfig;
  readonly issuer: string;
  readonly audience: string;
  readonly fetch: typeof fetch;
  readonly now: () => number;
  readonly closing: AbortSignal;
  readonly logger?: AuthLogger;
  readonly maxEntries?: number;
}

export interface Introspector {
  check(token: string): Promise<Verdict>;
  /** Introspection requests made so far (for tests and metrics). */
  readonly requests: number;
  clear(): void;
}

/** RFC 6749 §2.3.1: client id and secret are form-encoded before they are joined and base64'd. */
const formEncode = (s: string) => new URLSearchParams({ x: s }).toString().slice(2);

const refuse = (description: string): Verdict => ({ ok: false, unavailable: false, description });

export function createIntrospector(o: IntrospectorOptions): Introspector {
  const max = o.maxEntries ?? INTROSPECTION_CACHE_MAX;
  // Keyed by a digest of the token: the cache never holds a token.
  const cache = new Map<string, { verdict: Verdict; until: number }>();
  const inflight = new Map<string, Promise<Verdict>>();
  const basic = Buffer.from(
    `${formEncode(o.config.client_id)}:${formEncode(o.config.client_secret)}`,
  ).toString("base64");
  let requests = 0;

  async function ask(token: string): Promise<Verdict> {
    requests++;
    let answer: Record<string, unknown>;
    try {
      answer = await fetchJson(
        o.fetch,
        o.config.url,
        {
          method: "POST",
          headers: {
            "content-type": "application/x-www-form-urlencoded",
            accept: "application/json",
            authorization: `Basic ${basic}`,
          },
          body: new URLSearchParams({ token, token_type_hint: "access_token" }).toString(),
        },
        o.closing,
      );
    } catch (e) {
      const reason = e instanceof AuthServerError ? e.message : "introspection failed";
      o.logger?.warn("auth: token introspection failed", { reason });
      return {
        ok: false,
        unavailable: true,
        description: "the authorization server cannot check tokens now",
      };
    }
    return judge(answer);
  }

  function judge(a: Record<string, unknown>): Verdict {
    if (a.active !== true) return refuse("the token is not active");
    if (a.iss !== undefined && a.iss !== o.issuer) return refuse("the token was issued by another issuer");
    if (!claimValues("aud", a.aud).includes(o.audience))
      return refuse("the token was issued for another resource (aud)");
    const now = o.now() / 1000;
    if (typeof a.exp === "number" && a.exp <= now - CLOCK_SKEW_S) return refuse("the token has expired");
    if (typeof a.nbf === "number" && a.nbf > now + CLOCK_SKEW_S)
      return refuse("the token is not valid yet (nbf)");
    if (typeof a.token_type === "string" && a.token_type.toLowerCase() !== "bearer") {
      return refuse("the token is not a bearer access token");
    }
    if (a.cnf !== undefined) return refuse("the token is bound to a key (cnf), which is not supported");
    const { active: _active, ...claims } = a;
    const principal = principalFromClaims(claims, "introspection");
    if (!principal) return refuse("the token names no subject (sub)");
    return { ok: true, principal, ...(typeof a.exp === "number" ? { expiresAt: a.exp * 1000 } : {}) };
  }

  function remember(key: string, verdict: Verdict): void {
    // Only active answers with an exp are kept: an inactive token is not asked about twice in a row
    // by an honest client, and a token without exp could be revoked at any time.
    if (!verdict.ok || verdict.expiresAt === undefined) return;
    cache.set(key, { verdict, until: verdict.expiresAt });
    while (cache.size > max) cache.delete(cache.keys().next().value!);
  }

  return {
    get requests() {
      return requests;
    },
    clear() {
      cache.clear();
    },
    check(token) {
      const key = createHash("sha256").update(token).digest("base64url");
      const hit = cache.get(key);
      if (hit) {
        if (hit.until > o.now()) return Promise.resolve(hit.verdict);
        cache.delete(key);
      }
      const pending = inflight.get(key);
      if (pending) return pending;
      const p = ask(token).then((v) => {
        remember(key, v);
        return v;
      });
      inflight.set(key, p);
      void p.finally(() => inflight.delete(key));
      return p;
    },
  };
}
