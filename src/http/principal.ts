/**
 * @module Principal a request is, for the parts that care (per-user OAuth upstreams, their start page). Until the
 * resource server is wired in, a principal is the subject of the static bearer token the request carries
 * (`tokenSubject`: a digest, never the token). The handler records it once per request; the session table and
 * the OAuth pages read it.
 */
import type { IncomingMessage } from "node:http";
import { type StaticTokens, staticTokens } from "../auth/static-tokens.js";
import type { Principal } from "../auth/types.js";

const principals = new WeakMap<IncomingMessage, Principal>();
const matchers = new WeakMap<readonly string[], StaticTokens>();

/** The principal the handler found for this request, if any. */
export function principalOf(req: IncomingMessage): Principal | undefined {
  return principals.get(req);
}

/** Records the principal of the static token the request carries (none: nothing recorded). */
export function recordPrincipal(req: IncomingMessage, tokens: readonly string[]): Principal | undefined {
  if (!tokens.length) return undefined;
  let matcher = matchers.get(tokens);
  if (!matcher) {
    matcher = staticTokens(tokens);
    matchers.set(tokens, matcher);
  }
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "");
  const found = m ? matcher.match(m[1]!) : undefined;
  if (found) principals.set(req, found);
  return found;
}
