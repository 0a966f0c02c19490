/** @module Session ids that carry their session: signed (HMAC-SHA256) so any replica with the secret can rebuild it. */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** What a replica needs to rebuild a session it has never seen. */
export interface SessionSeed {
  /** The query string of the initialize request (the selection is recomputed from it). */
  readonly q: string;
  /** The negotiated protocol version. */
  readonly v: string;
  /** The client's capabilities and info, as sent in initialize. */
  readonly c: Record<string, unknown>;
  readonly i: { name: string; version: string };
}

const PREFIX = "tp1.";
const b64 = (b: Buffer | string) => Buffer.from(b).toString("base64url");

export function signSessionId(seed: SessionSeed, secret: string): string {
  const body = b64(JSON.stringify({ ...seed, n: randomBytes(9).toString("base64url") }));
  return `${PREFIX}${body}.${b64(createHmac("sha256", secret).update(body).digest())}`;
}

/** The seed of a valid id, or undefined for anything forged, altered or malformed. */
export function verifySessionId(id: string, secret: string): SessionSeed | undefined {
  if (!id.startsWith(PREFIX) || id.length > 8192) return undefined;
  const [body, mac] = id.slice(PREFIX.length).split(".");
  if (!body || !mac) return undefined;
  const expected = createHmac("sha256", secret).update(body).digest();
  const given = Buffer.from(mac, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  try {
    const seed = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as SessionSeed;
    if (typeof seed.q !== "string" || typeof seed.v !== "string") return undefined;
    return seed;
  } catch {
    return undefined;
  }
}
