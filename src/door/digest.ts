/** @module How logs name a session: a session id is a bearer of its session, so logs show a short digest of it. */
import { createHash } from "node:crypto";

/** The first 12 hex digits of the SHA-256 of the id (SPEC §8.3), never the id. */
export function sessionDigest(id: string): string {
  return createHash("sha256").update(id).digest("hex").slice(0, 12);
}
