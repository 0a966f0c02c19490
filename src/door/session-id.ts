/**
 * @module Session ids that carry their session: signed (HMAC-SHA256) so any replica with the secret can rebuild
 * it. An id has exactly one accepted spelling (strict base64url without padding, exactly three segments), so an
 * ended id stays ended however it is respelled.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { identityKey } from "../auth/requirements.js";
import type { Principal } from "../auth/types.js";

/** What a replica needs to rebuild a session it has never seen. */
export interface SessionSeed {
  /** The query string of the initialize request (the selection is recomputed from it). */
  readonly q: string;
  /** The negotiated protocol version. */
  readonly v: string;
  /** The client's capabilities and info, as sent in initialize. */
  readonly c: Record<string, unknown>;
  readonly i: { name: string; version: string };
  /** The digest of the credential values the session is bound to. */
  readonly b: string;
  /** A keyed digest of the subject of the principal it was opened by (absent without `auth:`). */
  readonly s?: string;
  /**
   * When it was issued (ms since the epoch): an id older than what the ended ids remember is not rebuilt
   * (mayHaveEnded). Absent in ids signed before it was added: they count as issued at 0.
   */
  readonly t?: number;
}

const PREFIX = "tp1.";
const MAX_ID = 8192;
/** Canonical base64url: no padding, and the last character carries no stray bits (checked by re-encoding). */
const SHAPE = /^tp1\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/;
const b64 = (b: Buffer | string) => Buffer.from(b).toString("base64url");

/**
 * The subject as a signed id carries it: keyed by the secret, since the payload is readable by whoever holds
 * the id (a plain digest of an e-mail address could be confirmed by guessing). Undefined without a principal.
 */
export function subjectDigest(
  principal: Principal | undefined,
  secret: string | undefined,
): string | undefined {
  if (!principal || !secret) return undefined;
  return createHmac("sha256", secret)
    .update(`toolpacks session subject\0${identityKey(principal)}`)
    .digest("base64url")
    .slice(0, 22);
}

export function signSessionId(seed: SessionSeed, secret: string): string {
  const body = b64(JSON.stringify({ ...seed, n: randomBytes(12).toString("base64url") }));
  return `${PREFIX}${body}.${b64(createHmac("sha256", secret).update(body).digest())}`;
}

/**
 * How far apart the clocks of the replica that issued an id and the one that recorded an end may be: an id
 * issued this close after the latest forgotten end is refused too.
 */
const CLOCK_SKEW_MS = 1000;

/**
 * Whether a signed id may be one of the ended ids the store no longer remembers (SPEC §8.1): issued no later than
 * the latest end the store forgot (`forgottenUntil`), so it cannot be told from them and is not rebuilt. An id
 * issued after it is ended exactly when the store says so, however many ids end meanwhile.
 */
export function mayHaveEnded(seed: SessionSeed, forgottenUntil: number | undefined): boolean {
  return forgottenUntil !== undefined && (seed.t ?? 0) <= forgottenUntil + CLOCK_SKEW_MS;
}

function canonical(text: string): Buffer | undefined {
  const bytes = Buffer.from(text, "base64url");
  return b64(bytes) === text ? bytes : undefined;
}

/** The seed of a valid id, or undefined for anything forged, altered, respelled or malformed. */
export function verifySessionId(id: string, secret: string): SessionSeed | undefined {
  if (id.length > MAX_ID) return undefined;
  const m = SHAPE.exec(id);
  if (!m) return undefined;
  const [, body, mac] = m as unknown as [string, string, string];
  const given = canonical(mac);
  const payload = canonical(body);
  if (!given || !payload) return undefined;
  const expected = createHmac("sha256", secret).update(body).digest();
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  try {
    const seed = JSON.parse(payload.toString("utf8")) as SessionSeed;
    if (typeof seed.q !== "string" || typeof seed.v !== "string" || typeof seed.b !== "string")
      return undefined;
    if (seed.s !== undefined && typeof seed.s !== "string") return undefined;
    if (seed.t !== undefined && !Number.isSafeInteger(seed.t)) return undefined;
    return seed;
  } catch {
    return undefined;
  }
}
