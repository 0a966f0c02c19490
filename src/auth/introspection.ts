/**
 * @module Opaque tokens checked by RFC 7662 introspection: concurrent checks of one token share one request, and
 * requests are bounded (introspection-gate.ts): made-up tokens cost the authorization server a bounded number.
 */
import { createHash } from "node:crypto";
import { claimValues, principalFromClaims } from "./claims.js";
import { AuthServerError, fetchJson } from "./fetch-json.js";
import { IntrospectionGate, type IntrospectionLimits } from "./introspection-gate.js";
import { CLOCK_SKEW_S, type Verdict } from "./jwt.js";
import type { AuthLogger, IntrospectionConfig } from "./types.js";

export interface IntrospectorOptions {
  readonly config: IntrospectionConfig;
  readonly issuer: string;
  readonly audience: string;
  readonly fetch: typeof fetch;
  readonly now: () => number;
  readonly closing: AbortSignal;
  readonly logger?: AuthLogger;
  /** A limit of SPEC §7.6 was reached ("introspections"): counted by the caller. */
  readonly onLimit?: (limit: string) => void;
  readonly limits?: IntrospectionLimits;
}

export interface Introspector {
  check(token: string): Promise<Verdict>;
  /** Introspection requests made so far (for tests and metrics). */
  readonly requests: number;
}

/** RFC 6749 §2.3.1: client id and secret are form-encoded before they are joined and base64'd. */
const formEncode = (s: string) => new URLSearchParams({ x: s }).toString().slice(2);

const refuse = (description: string): Verdict => ({ ok: false, unavailable: false, description });

export function createIntrospector(o: IntrospectorOptions): Introspector {
  // Keyed by a digest of the token: nothing here holds a token longer than its request.
  const inflight = new Map<string, Promise<Verdict>>();
  const basic = Buffer.from(
    `${formEncode(o.config.client_id)}:${formEncode(o.config.client_secret)}`,
  ).toString("base64");
  let requests = 0;
  const gate = new IntrospectionGate(o.now, o.limits);
  let warned = Number.NEGATIVE_INFINITY;
  /** Past the rate: 503 with Retry-After, said at warn once a minute; the token itself is not judged. */
  const limited = (): Verdict => {
    o.onLimit?.("introspections");
    const loud = o.now() - warned >= 60_000;
    if (loud) warned = o.now();
    o.logger?.[loud ? "warn" : "debug"](
      "auth: too many tokens to introspect; refused until the rate allows",
      {
        limit: "introspections",
      },
    );
    return {
      ok: false,
      unavailable: true,
      retryAfter: gate.retryAfter,
      description: "too many tokens are being checked now: try again shortly",
    };
  };

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

  return {
    get requests() {
      return requests;
    },
    check(token) {
      const key = createHash("sha256").update(token).digest("base64url");
      const known = gate.refusal(key);
      if (known !== undefined) return Promise.resolve(refuse(known));
      const pending = inflight.get(key);
      if (pending) return pending;
      if (!gate.take()) return Promise.resolve(limited());
      const p = gate
        .run(() => ask(token))
        .then((v) => {
          // A verdict on the token is remembered; "cannot check now" is not.
          if (!v.ok && !v.unavailable) gate.refused(key, v.description);
          return v;
        });
      inflight.set(key, p);
      void p.finally(() => inflight.delete(key));
      return p;
    },
  };
}
