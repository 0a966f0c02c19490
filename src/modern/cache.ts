/** @module Caching hints (`ttlMs`, `cacheScope`) on the results toolpacks answers to 2026-07-28 clients (server/utilities/caching). */
import { resultTypeOf } from "./meta.js";
import { isRecord } from "./wire.js";

/** The operations whose complete results MUST carry hints (§Cacheable results). */
export const CACHEABLE_METHODS: ReadonlySet<string> = new Set([
  "server/discover",
  "tools/list",
  "prompts/list",
  "resources/list",
  "resources/templates/list",
  "resources/read",
]);

type CacheScope = "public" | "private";
export interface CacheHint {
  readonly ttlMs: number;
  readonly cacheScope: CacheScope;
}

export interface CacheFacts {
  readonly method: string;
  /** The request carried `inputResponses` or `requestState`: its result MUST NOT be cached (§Cache key). */
  readonly retry: boolean;
  /**
   * The answer may differ by who asks: an isolated or per-credential upstream instance, forwarded client
   * headers, a principal-dependent filter. Then it is `private`: `public` means any user may be served it.
   */
  readonly dependsOnCaller: boolean;
  /**
   * The hints of the upstream results this answer is made of (a read passes one through; a list merges
   * several; a 2025 upstream gives none). A `private` one makes ours private; each TTL caps ours.
   */
  readonly upstream: readonly unknown[];
  /** Our own freshness for this answer, when no upstream asks for less. */
  readonly ttlMs: number;
}

/** A hint as a peer sent it, read leniently: a negative or non-integer TTL counts as 0 (§TTL field). */
export function readHint(result: unknown): Partial<CacheHint> {
  if (!isRecord(result)) return {};
  const ttl = result.ttlMs;
  const scope = result.cacheScope;
  return {
    ...(typeof ttl === "number" ? { ttlMs: Number.isFinite(ttl) && ttl > 0 ? Math.floor(ttl) : 0 } : {}),
    ...(scope === "public" || scope === "private" ? { cacheScope: scope } : {}),
  };
}

/**
 * The hint for one answer, or undefined when it must carry none (not a cacheable method). Retries get
 * `{0, private}` (required, but never to be reused). `public` only when the answer cannot depend on who
 * asks: not per caller, and no upstream part marked private.
 */
export function cacheHint(facts: CacheFacts): CacheHint | undefined {
  if (!CACHEABLE_METHODS.has(facts.method)) return undefined;
  if (facts.retry) return { ttlMs: 0, cacheScope: "private" };
  const parts = facts.upstream.map(readHint);
  const ttlMs = Math.max(
    0,
    Math.floor(Math.min(facts.ttlMs, ...parts.map((p) => p.ttlMs ?? Number.POSITIVE_INFINITY))),
  );
  const cacheScope =
    facts.dependsOnCaller || parts.some((p) => p.cacheScope === "private") ? "private" : "public";
  return { ttlMs: Number.isFinite(ttlMs) ? ttlMs : 0, cacheScope };
}

/**
 * The result with its hints set for a 2026 client: `input_required` results carry none (stripped); a
 * cacheable complete result gets `cacheHint(facts)`; any other result is left as it is.
 */
export function decorate(
  result: Readonly<Record<string, unknown>>,
  facts: CacheFacts,
): Record<string, unknown> {
  const { ttlMs: _t, cacheScope: _s, ...bare } = result;
  if (resultTypeOf(result) !== "complete") return bare;
  const hint = cacheHint(facts);
  return hint ? { ...bare, ...hint } : { ...result };
}
