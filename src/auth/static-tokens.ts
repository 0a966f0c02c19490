/** @module Static bearer tokens: constant-time comparison against every configured token, and their principals. */
import { createHash, timingSafeEqual } from "node:crypto";
import type { Principal, StaticTokenConfig } from "./types.js";

const digest = (s: string) => createHash("sha256").update(s).digest();

/**
 * The subject of a token configured without one: 8 hex digits of a domain-separated digest. Enough
 * to tell tokens apart in logs; too short to confirm a guess of a short token offline.
 */
export function tokenSubject(token: string): string {
  return `token:${createHash("sha256").update(`toolpacks token subject\0${token}`).digest("hex").slice(0, 8)}`;
}

export interface StaticTokens {
  /** The principal of a configured token; undefined otherwise. Compares against all, always. */
  match(token: string): Principal | undefined;
  readonly size: number;
}

export function staticTokens(tokens: readonly (string | StaticTokenConfig)[]): StaticTokens {
  const entries = tokens.map((t) => {
    const spec = typeof t === "string" ? { token: t } : t;
    const principal: Principal = Object.freeze({
      subject: spec.subject ?? tokenSubject(spec.token),
      scopes: spec.scopes ? new Set(spec.scopes) : "all",
      claims: Object.freeze({}),
      via: "token",
    });
    return { digest: digest(spec.token), principal };
  });
  return {
    size: entries.length,
    match(token) {
      const given = digest(token);
      let found: Principal | undefined;
      for (const e of entries) {
        if (timingSafeEqual(given, e.digest) && !found) found = e.principal;
      }
      return found;
    },
  };
}
