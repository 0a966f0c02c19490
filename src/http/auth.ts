/** @module Bearer authentication: constant-time comparison against every accepted token. */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

const digest = (s: string) => createHash("sha256").update(s).digest();

/** The tokens' digests, computed once per catalog's token list rather than on every request. */
const digests = new WeakMap<readonly string[], Buffer[]>();
function digestsOf(tokens: readonly string[]): Buffer[] {
  let d = digests.get(tokens);
  if (!d) {
    d = tokens.map(digest);
    digests.set(tokens, d);
  }
  return d;
}

/** True when no tokens are configured, or the request carries one of them. Compares against all, always. */
export function authorized(req: IncomingMessage, tokens: readonly string[]): boolean {
  if (tokens.length === 0) return true;
  const header = req.headers.authorization ?? "";
  const m = /^Bearer\s+(.+)$/i.exec(header);
  const given = digest(m ? m[1]!.trim() : "");
  let ok = false;
  for (const t of digestsOf(tokens)) ok = timingSafeEqual(given, t) || ok;
  return ok && m !== null;
}
