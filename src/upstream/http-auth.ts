/**
 * @module OAuth on the HTTP upstream transport: the UpstreamAuth's headers on every request; a 401 (or a 403
 * `insufficient_scope`) handed to `onUnauthorized` and the request sent once more on "retry"; "a person must
 * authorize first" raised as AuthorizationRequiredError, which the session layer turns into a JSON-RPC error,
 * a URL elicitation or (2026-07-28) `input_required`.
 */
import { bearerChallenge } from "../oauth/challenge.js";
import { AuthorizationRequired } from "../oauth/fetch.js";
import type { UpstreamAuth } from "../oauth/types.js";
import { UpstreamHttpError } from "./http-answer.js";
import type { Response } from "./http-exchange.js";

export type { UpstreamAuth } from "../oauth/types.js";

/** The JSON-RPC code of "authorization required" for a client that cannot be asked to open the URL. */
const AUTHORIZATION_REQUIRED_CODE = -32000;

/**
 * An upstream refuses toolpacks until a person authorizes it at `authorizeUrl` (toolpacks' own start page, for
 * the principal the instance belongs to). `message` carries the URL: it is for that principal's client only,
 * never for logs (the URL holds a short-lived ticket).
 */
export class AuthorizationRequiredError extends AuthorizationRequired {
  readonly code = AUTHORIZATION_REQUIRED_CODE;
  readonly data: {
    readonly reason: "authorization_required";
    readonly upstream: string;
    readonly url: string;
  };
  constructor(
    readonly upstream: string,
    authorizeUrl: string,
  ) {
    super(authorizeUrl);
    this.message = `authorization required: open ${authorizeUrl} to let toolpacks use upstream ${upstream} on your behalf, then try again`;
    this.data = { reason: "authorization_required", upstream, url: authorizeUrl };
  }
}

/** The challenge an UpstreamAuth acts on: a 401, or a 403 whose Bearer challenge says insufficient_scope. */
function challengeOf(res: Response): string | undefined {
  const h = res.headers["www-authenticate"];
  const value = Array.isArray(h) ? h.join(", ") : h;
  if (!value) return undefined;
  if (res.statusCode === 401) return value;
  if (res.statusCode === 403 && bearerChallenge(value)?.error === "insufficient_scope") return value;
  return undefined;
}

/** The bearer token in headers `auth` produced (to keep it out of error text). */
function bearerOf(headers: Readonly<Record<string, string>>): string | undefined {
  const v = headers.authorization ?? headers.Authorization;
  return v ? /^Bearer\s+(\S+)/i.exec(v)?.[1] : undefined;
}

/** An error whose text quotes the token (an upstream that echoes headers) says `[token]` instead. */
export function scrubToken(err: unknown, headers: Readonly<Record<string, string>>): unknown {
  const token = bearerOf(headers);
  if (token && token.length >= 8 && err instanceof Error && err.message.includes(token))
    err.message = err.message.split(token).join("[token]");
  return err;
}

/**
 * Sends a request with the auth's headers; a challenge is answered by `onUnauthorized`, and on "retry" the
 * request goes out once more with fresh headers. A second challenge is asked about again only to learn
 * whether a person must authorize; otherwise it fails as a refusal. Returns the unchallenged response.
 */
export async function sendAuthorized(
  auth: UpstreamAuth,
  upstream: string,
  send: (headers: Record<string, string>) => Promise<Response>,
): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const sent = await auth.headers();
    const res = await send(sent);
    const challenge = challengeOf(res);
    if (!challenge) return res;
    await res.body.dump().catch(() => {});
    const next = await auth.onUnauthorized(challenge, sent);
    if (next !== "retry") throw new AuthorizationRequiredError(upstream, next.authorizeUrl);
    if (attempt >= 1)
      throw new UpstreamHttpError(
        res.statusCode,
        `the server refused the OAuth token toolpacks obtained for it again (HTTP ${res.statusCode}); check the upstream's oauth settings (scopes, issuer)`,
      );
  }
}

/** A refused GET stream's handler: true when the auth has new headers to open it with after a challenge. */
export function retriedAfterChallenge(auth: UpstreamAuth) {
  return async (res: Response, sent: Readonly<Record<string, string>>): Promise<boolean> => {
    const challenge = challengeOf(res);
    if (!challenge) return false;
    return (await auth.onUnauthorized(challenge, sent).catch(() => undefined)) === "retry";
  };
}
