/**
 * @module toolpacks as the OAuth client of its HTTP upstreams, as the serving core sees it: the UpstreamAuth of
 * each instance (the shared grant, or one principal's), the flow endpoints, and what happens when a grant is
 * stored: the instances that wait for it start again, and calls waiting for it (a URL elicitation) go on.
 */

import type { Catalog, Upstream } from "../catalog/types.js";
import { OAuthClient } from "../oauth/client.js";
import { OAuthFlowError } from "../oauth/errors.js";
import { type FlowRequest, type FlowResponse, oauthRoutes } from "../oauth/routes.js";
import type { Tickets } from "../oauth/ticket.js";
import type { GrantChange, OAuthUpstream, TokenStore, UpstreamAuth } from "../oauth/types.js";
import type { InstanceRef } from "../upstream/instance.js";
import type { Signal } from "../wire/signal.js";

export interface UpstreamOAuthOptions {
  readonly store: TokenStore;
  /** The current catalog (a reload swaps it). */
  readonly catalog: () => Catalog;
  /** Where /oauth/* is served (https in production); undefined: not served (stdio): `toolpacks login` only. */
  readonly publicUrl?: () => string;
  readonly tickets?: Tickets;
  /** A person's grant stored, or a grant dropped (commands/grant-report.ts logs it and writes the audit line). */
  readonly onGrant?: (change: GrantChange) => void;
}

/** The OAuth view of an upstream in a catalog, if it has one. */
export function oauthUpstreamOf(catalog: Catalog, name: string): OAuthUpstream | undefined {
  const up = catalog.upstreams.get(name);
  return up?.transport === "http" && up.oauth ? { name, url: up.url!, oauth: up.oauth } : undefined;
}

/** An instance of a per-user upstream that nobody signed in to: it can never be authorized. */
function nobody(upstream: string): UpstreamAuth {
  return {
    headers: async () => ({}),
    onUnauthorized: async () => {
      throw new OAuthFlowError(
        "principal",
        `upstream ${upstream} is per-user: sign in to toolpacks (auth:) so it knows who is asking`,
      );
    },
  };
}

/** Not served (stdio): a person authorizes with `toolpacks login`, never through a page nobody serves. */
function loginOnly(auth: UpstreamAuth, upstream: string): UpstreamAuth {
  return {
    headers: () => auth.headers(),
    onUnauthorized: async (challenge, sent) => {
      const next = await auth.onUnauthorized(challenge, sent);
      if (next === "retry") return next;
      throw new OAuthFlowError(
        "authorization",
        `upstream ${upstream} is not authorized: run toolpacks login ${upstream} with this config`,
      );
    },
  };
}

export class UpstreamOAuth {
  readonly client: OAuthClient;
  readonly #o: UpstreamOAuthOptions;
  /** Calls waiting for a grant of (upstream, principal). */
  readonly #waiters = new Map<string, Set<() => void>>();
  #renew: ((upstream: string, principal: string) => Promise<void>) | undefined;

  constructor(options: UpstreamOAuthOptions) {
    this.#o = options;
    this.client = new OAuthClient({
      store: options.store,
      upstream: (name) => oauthUpstreamOf(options.catalog(), name),
      // Not served: a URL is still made (and then replaced by "run toolpacks login"), never a flow at the AS.
      publicUrl: options.publicUrl ?? "http://127.0.0.1",
      ...(options.tickets ? { tickets: options.tickets } : {}),
      ...(options.onGrant ? { onGrant: options.onGrant } : {}),
      onAuthorized: (upstream, principal) => this.#authorized(upstream, principal),
    });
  }

  /** The serving core's part of a new grant: start its instances again, re-resolve their sessions. */
  attach(renew: (upstream: string, principal: string) => Promise<void>): void {
    this.#renew = renew;
  }

  /** The store key part of an instance's principal: "" for a shared upstream. */
  principalOf(ref: InstanceRef, spec: Upstream | undefined): string | undefined {
    return spec?.oauth?.mode === "per-user" ? ref.principal : "";
  }

  /** The tokens an instance carries; undefined for an upstream without oauth. */
  auth(ref: InstanceRef, spec: Upstream): UpstreamAuth | undefined {
    if (!spec.oauth) return undefined;
    const principal = this.principalOf(ref, spec);
    if (principal === undefined) return nobody(spec.name);
    const auth = this.client.auth(spec.name, principal);
    return this.#o.publicUrl ? auth : loginOnly(auth, spec.name);
  }

  /** The /oauth/* handlers; undefined when not served. */
  routes(): ((req: FlowRequest) => Promise<FlowResponse | undefined>) | undefined {
    const publicUrl = this.#o.publicUrl;
    if (!publicUrl) return undefined;
    let handler: ((req: FlowRequest) => Promise<FlowResponse | undefined>) | undefined;
    return (req) => {
      handler ??= oauthRoutes(this.client, { publicUrl: publicUrl() });
      return handler(req);
    };
  }

  /**
   * Resolves once `ref`'s upstream is authorized for its principal and the serving core has taken the grant in;
   * rejects when `signal` aborts or after `timeoutMs`. Made before the person is asked, so a fast flow is seen.
   */
  wait(ref: InstanceRef, spec: Upstream | undefined, signal: Signal, timeoutMs: number): Promise<void> {
    const key = JSON.stringify([ref.upstream, this.principalOf(ref, spec) ?? null]);
    return new Promise<void>((resolve, reject) => {
      const set = this.#waiters.get(key) ?? new Set<() => void>();
      this.#waiters.set(key, set);
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", aborted);
        set.delete(done);
        if (!set.size && this.#waiters.get(key) === set) this.#waiters.delete(key);
      };
      const fail = (err: Error) => {
        done();
        reject(err);
      };
      const aborted = () => fail(new Error("cancelled while waiting for the authorization"));
      const timer = setTimeout(
        () => fail(new Error(`the authorization was not completed within ${Math.round(timeoutMs / 1000)} s`)),
        timeoutMs,
      );
      timer.unref();
      if (signal.aborted) return aborted();
      signal.addEventListener("abort", aborted, { once: true });
      set.add(() => {
        done();
        resolve();
      });
    });
  }

  async #authorized(upstream: string, principal: string): Promise<void> {
    try {
      await this.#renew?.(upstream, principal);
    } finally {
      const set = this.#waiters.get(JSON.stringify([upstream, principal]));
      for (const wake of [...(set ?? [])]) wake();
    }
  }
}
