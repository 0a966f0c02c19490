/** @module The key and lifetime of the `requestState` toolpacks signs: shared by replicas through their session secret. */
import { createHmac, randomBytes } from "node:crypto";
import type { Catalog } from "../catalog/types.js";
import { createRequestStateCodec, type RequestStateCodec } from "./request-state.js";

export type { RequestStateCodec } from "./request-state.js";

const MIN_TTL_MS = 300_000;

/**
 * A codec whose states outlive the longest `input_timeout` of the catalog. With a secret (the session secret
 * replicas share) every replica derives the same key, so any of them can verify a state; without one, a key of
 * this process only.
 */
export function requestStateCodec(
  catalog: Catalog,
  secret: string | undefined,
  now: () => number,
): RequestStateCodec {
  const key = secret
    ? createHmac("sha256", "toolpacks requestState key").update(secret).digest()
    : randomBytes(32);
  let ttlMs = MIN_TTL_MS;
  for (const u of catalog.upstreams.values()) ttlMs = Math.max(ttlMs, u.inputTimeoutMs);
  return createRequestStateCodec({ keys: [key], ttlMs, now });
}
