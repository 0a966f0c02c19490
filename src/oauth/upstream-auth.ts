/** @module UpstreamAuth for one (upstream, principal): bearer headers, refresh, re-discovery, step-up, retry limits. */
import { bearerChallenge } from "./challenge.js";
import { OAuthFlowError } from "./errors.js";
import { covers, scopeKey, scopesFor } from "./scopes.js";
import type { CredentialRecords } from "./store/records.js";
import type { Discovery, GrantRecord, OAuthUpstream, UpstreamAuth } from "./types.js";

/** What an UpstreamAuth needs from the OAuth client (so this module imports nothing of it). */
export interface AuthEngine {
  readonly records: CredentialRecords;
  readonly now: () => number;
  upstream(name: string): OAuthUpstream;
  /** `fresh`: not from what was read before (an upstream's 401 may mean its authorization server moved). */
  discover(
    up: OAuthUpstream,
    challenge?: ReturnType<typeof bearerChallenge>,
    fresh?: boolean,
  ): Promise<Discovery>;
  refresh(up: OAuthUpstream, principal: string, grant: GrantRecord): Promise<GrantRecord | undefined>;
  /** Deletes a grant that stopped working, and says so. */
  dropGrant(up: OAuthUpstream, principal: string, reason: string): Promise<void>;
  clientCredentials(
    up: OAuthUpstream,
    principal: string,
    d: Discovery,
    scopes: readonly string[],
  ): Promise<GrantRecord>;
  authorizeUrl(upstream: string, principal: string, d: Discovery, scopes: readonly string[]): Promise<string>;
}

/** Refresh this long before the AS's expiry, so a token does not lapse in flight. */
const SKEW_MS = 30_000;
const WINDOW_MS = 10 * 60_000;
/** A token refused this soon after it was issued counts towards MAX_REFUSED. */
const FRESH_MS = 60_000;
/** New tokens the upstream may refuse in a row (within the window) before we stop asking for more. */
const MAX_REFUSED = 3;
/** Re-authorizations for a scope set already granted that the upstream still calls insufficient. */
const MAX_STEP_UPS = 1;

function bearerOf(headers: Readonly<Record<string, string>> | undefined): string | undefined {
  if (!headers) return undefined;
  const value = Object.entries(headers).find(([k]) => k.toLowerCase() === "authorization")?.[1];
  return value ? /^Bearer\s+(.+)$/i.exec(value)?.[1]?.trim() : undefined;
}

export class OAuthUpstreamAuth implements UpstreamAuth {
  #queue: Promise<unknown> = Promise.resolve();
  /** null: not read from the store yet. */
  #grant: GrantRecord | undefined | null = null;
  /** The access token our last refresh produced: refused again, it is not refreshed a second time. */
  #refreshedTo: string | undefined;
  readonly #counts = new Map<string, { n: number; since: number }>();

  constructor(
    private readonly engine: AuthEngine,
    readonly upstream: string,
    readonly principal: string,
  ) {}

  /** Drops the cached grant (another flow stored a new one). */
  forget(): void {
    this.#grant = null;
  }

  /** One operation at a time per (upstream, principal): two 401s never refresh (and rotate) twice. */
  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn);
    this.#queue = run.catch(() => {});
    return run;
  }

  async #load(): Promise<GrantRecord | undefined> {
    this.#grant = await this.engine.records.grant(this.upstream, this.principal);
    return this.#grant;
  }

  headers(): Promise<Record<string, string>> {
    return this.#serial(async () => {
      let g = this.#grant === null ? await this.#load() : this.#grant;
      const now = this.engine.now();
      const expiresAt = g?.expires_at;
      if (g && expiresAt !== undefined && expiresAt - SKEW_MS <= now) {
        try {
          g = await this.#renew(g);
        } catch (err) {
          // The AS cannot renew it right now: a token not yet expired is still worth sending.
          if (expiresAt <= now) throw err;
        }
      }
      const headers: Record<string, string> = {};
      if (g) headers.authorization = `Bearer ${g.access_token}`;
      return headers;
    });
  }

  /** A grant about to expire: refreshed, or (machine to machine) replaced; kept as is when neither is possible. */
  async #renew(g: GrantRecord): Promise<GrantRecord | undefined> {
    if (g.refresh_token) return this.#refresh(g);
    if (g.grant !== "client_credentials") return g;
    const up = this.engine.upstream(this.upstream);
    const d = await this.engine.discover(up);
    const next = await this.engine.clientCredentials(up, this.principal, d, g.scopes);
    this.#grant = next;
    return next;
  }

  async #refresh(g: GrantRecord): Promise<GrantRecord | undefined> {
    const next = await this.engine.refresh(this.engine.upstream(this.upstream), this.principal, g);
    this.#grant = next;
    this.#refreshedTo = next?.access_token;
    return next;
  }

  /** Counts an event; past `max` within the window it throws, and keeps throwing until the window ends. */
  #limit(key: string, max: number, message: string): void {
    const now = this.engine.now();
    const c = this.#counts.get(key);
    const fresh = !c || now - c.since >= WINDOW_MS;
    const n = fresh ? 1 : c.n + 1;
    this.#counts.set(key, { n, since: fresh ? now : c.since });
    if (n > max) throw new OAuthFlowError("retry-limit", message);
  }

  onUnauthorized(
    wwwAuthenticate: string,
    sent?: Readonly<Record<string, string>>,
  ): Promise<"retry" | { authorizeUrl: string }> {
    return this.#serial(async () => {
      const up = this.engine.upstream(this.upstream);
      const challenge = bearerChallenge(wwwAuthenticate);
      if (!challenge)
        throw new OAuthFlowError(
          "challenge",
          `upstream ${up.name} refused the request without a Bearer challenge`,
        );
      const grant = await this.#load();
      // null: the request went out without a token; undefined: the caller did not say (assume the current one).
      const sentToken = sent ? (bearerOf(sent) ?? null) : undefined;
      // The request raced a refresh or a new authorization (here or in another process): it is already replaced.
      if (grant && sentToken !== undefined && sentToken !== grant.access_token) return "retry";

      if (challenge.error === "insufficient_scope") {
        const asked = challenge.scope ?? [];
        if (grant && covers(grant.scopes, asked))
          this.#limit(
            `scope ${scopeKey([...grant.scopes, ...asked])}`,
            MAX_STEP_UPS,
            `upstream ${up.name} still answers insufficient_scope (${asked.join(" ")}) after they were authorized: giving up`,
          );
        const d = await this.engine.discover(up, challenge, true);
        const previous = grant && grant.issuer === d.as.issuer ? grant.scopes : undefined;
        const scopes = scopesFor(up.oauth, d, { challenged: asked, ...(previous ? { previous } : {}) });
        return this.#obtain(up, d, scopes);
      }

      if (grant?.refresh_token && grant.access_token !== this.#refreshedTo) {
        if (await this.#refresh(grant)) return "retry";
      }
      const d = await this.engine.discover(up, challenge, true);
      if (grant) {
        await this.engine.dropGrant(up, this.principal, `upstream ${up.name} refused its token`);
        this.#grant = undefined;
        // A token refused as soon as it was issued, again and again, is a loop, not an expiry.
        if (this.engine.now() - grant.obtained_at < FRESH_MS)
          this.#limit(
            "refused",
            MAX_REFUSED,
            `upstream ${up.name} refuses every token ${d.as.issuer} issues for it: giving up for now`,
          );
      }
      const previous = grant && grant.issuer === d.as.issuer ? grant.scopes : undefined;
      const scopes = scopesFor(up.oauth, d, {
        ...(challenge.scope ? { challenged: challenge.scope } : {}),
        ...(previous ? { previous } : {}),
      });
      return this.#obtain(up, d, scopes);
    });
  }

  async #obtain(
    up: OAuthUpstream,
    d: Discovery,
    scopes: readonly string[],
  ): Promise<"retry" | { authorizeUrl: string }> {
    if (up.oauth.grant === "client_credentials") {
      const g = await this.engine.clientCredentials(up, this.principal, d, scopes);
      this.#grant = g;
      this.#refreshedTo = undefined;
      return "retry";
    }
    return { authorizeUrl: await this.engine.authorizeUrl(this.upstream, this.principal, d, scopes) };
  }
}
