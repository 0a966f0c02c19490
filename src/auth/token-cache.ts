/** @module Accepted tokens remembered until their exp: bounded, keyed by a digest (never the token). */
import { createHash } from "node:crypto";
import type { Principal } from "./types.js";

/** Entries at most; the oldest goes first. */
const TOKEN_CACHE_MAX = 10_000;

export interface TokenCache {
  get(token: string): Principal | undefined;
  /** Remembers an accepted token until `expiresAt` (ms); a token without exp is not remembered. */
  set(token: string, principal: Principal, expiresAt: number | undefined): void;
  clear(): void;
  readonly size: number;
}

export function createTokenCache(now: () => number, max = TOKEN_CACHE_MAX): TokenCache {
  const entries = new Map<string, { principal: Principal; until: number }>();
  const key = (token: string) => createHash("sha256").update(token).digest("base64url");
  return {
    get size() {
      return entries.size;
    },
    get(token) {
      const k = key(token);
      const hit = entries.get(k);
      if (!hit) return undefined;
      if (hit.until > now()) return hit.principal;
      entries.delete(k);
      return undefined;
    },
    set(token, principal, expiresAt) {
      if (expiresAt === undefined || expiresAt <= now()) return;
      entries.set(key(token), { principal, until: expiresAt });
      while (entries.size > max) entries.delete(entries.keys().next().value!);
    },
    clear() {
      entries.clear();
    },
  };
}
