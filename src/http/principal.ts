/**
 * @module Who a request is, for the parts that care (per-user OAuth upstreams, their start page). Until the
 * resource server is wired in, a principal is the subject of the static bearer token the request carries
 * (`tokenSubject`: a digest, never the token). The handler records it once per request; the session table and
 * the OAuth pages read it.
 */
import type { IncomingMessage } from "node:http";
import { type StaticTokens, staticTokens } from "../auth/static-tokens.js";
import type { Who } from "../proxy/instances.js";

const principals = new WeakMap<IncomingMessage, Who>();
const matchers = new WeakMap<readonly string[], StaticTokens>();

/** The principal the handler found for this request, if any. */
export function principalOf(req: IncomingMessage): Who | undefined {
  return principals.get(req);
}

/** Records the principal of the static token the request carries (none: nothing recorded). */
export function recordPrincipal(req: IncomingMessage, tokens: readonly string[]): Who | undefined {
  if (!tokens.length) return undefined;
  let matcher = matchers.get(tokens);
  if (!matcher) {
    matcher = staticTokens(tokens);
    matchers.set(tokens, matcher);
  }
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "");
  const found = m ? matcher.match(m[1]!) : undefined;
  if (!found) return undefined;
  const who = { subject: found.subject };
  principals.set(req, who);
  return who;
}
