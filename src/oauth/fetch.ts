/** @module A fetch that carries an UpstreamAuth's headers and acts on 401 / 403 insufficient_scope challenges. */
import { bearerChallenge } from "./challenge.js";
import type { Fetch } from "./http.js";
import type { UpstreamAuth } from "./types.js";

/** A person must authorize first: the connection turns this into an error, an elicitation or input_required. */
export class AuthorizationRequired extends Error {
  override readonly name = "AuthorizationRequired";
  constructor(readonly authorizeUrl: string) {
    super(`authorization required: open ${authorizeUrl}`);
  }
}

export interface AuthorizedFetchOptions {
  /** Completes an authorization (a test, the CLI); without it, AuthorizationRequired is thrown. */
  readonly authorize?: (authorizeUrl: string) => Promise<void>;
  /** Challenges answered per request before the upstream's answer is returned as is. */
  readonly maxRetries?: number;
}

/** The challenge an UpstreamAuth should see: a 401, or a 403 whose Bearer challenge says insufficient_scope. */
export function authChallenge(res: Response): string | undefined {
  const header = res.headers.get("www-authenticate");
  if (!header) return undefined;
  if (res.status === 401) return header;
  if (res.status === 403 && bearerChallenge(header)?.error === "insufficient_scope") return header;
  return undefined;
}

/** Wraps a fetch (e.g. for the SDK's StreamableHTTPClientTransport): the request body must be replayable. */
export function withUpstreamAuth(
  auth: UpstreamAuth,
  base: Fetch,
  options: AuthorizedFetchOptions = {},
): Fetch {
  const max = options.maxRetries ?? 3;
  return async (url, init) => {
    for (let attempt = 0; ; attempt++) {
      const extra = await auth.headers();
      const headers = new Headers(init?.headers);
      for (const [k, v] of Object.entries(extra)) headers.set(k, v);
      const res = await base(url, { ...init, headers });
      const challenge = authChallenge(res);
      if (!challenge || attempt >= max) return res;
      await res.body?.cancel().catch(() => {});
      const next = await auth.onUnauthorized(challenge, extra);
      if (next === "retry") continue;
      if (!options.authorize) throw new AuthorizationRequired(next.authorizeUrl);
      await options.authorize(next.authorizeUrl);
    }
  };
}
