/**
 * @module What the gateway takes from the OAuth client: each instance's tokens, the sessions' view of
 * "authorization required", and what a newly stored grant does: the instances of that (upstream, principal)
 * start again at once (no backoff) and the sessions using them are resolved again (list_changed if it changed).
 */
import type { UpstreamState } from "../catalog/inventory.js";
import type { Catalog, Upstream } from "../catalog/types.js";
import type { Resolution } from "../resolve.js";
import type { Selection } from "../selection.js";
import type { UpstreamAuth } from "../upstream/http-auth.js";
import type { InstanceRef } from "../upstream/instance.js";
import { exactUpstream } from "./authorization.js";
import type { SessionAuthorization } from "./host.js";
import type { UpstreamOAuth } from "./upstream-oauth.js";

export type { UpstreamOAuth } from "./upstream-oauth.js";

interface RenewedSession {
  readonly selection: Selection;
  readonly refs: ReadonlyMap<string, InstanceRef>;
  update(resolution: Resolution): void;
}

export interface RenewHost {
  readonly catalog: Catalog;
  readonly pool: {
    instances(): { ref: InstanceRef }[];
    existing(ref: InstanceRef): { renew(): Promise<UpstreamState> } | undefined;
  };
  readonly sessions: {
    users(ref: InstanceRef): RenewedSession[];
    has(s: RenewedSession): boolean;
  };
  resolve(selection: Selection, refs: ReadonlyMap<string, InstanceRef>): Promise<Resolution>;
}

/** A grant was stored for (upstream, principal; "" when shared): its instances and their sessions go on. */
async function renewAuthorized(host: RenewHost, upstream: string, principal: string): Promise<void> {
  const shared = host.catalog.upstreams.get(upstream)?.oauth?.mode !== "per-user";
  const refs = host.pool
    .instances()
    .map((i) => i.ref)
    .filter((r) => r.upstream === upstream && (shared || r.principal === principal));
  await Promise.all(refs.map((r) => host.pool.existing(r)?.renew()));
  const sessions = [...new Set(refs.flatMap((r) => host.sessions.users(r)))];
  await Promise.all(
    sessions.map(async (s) => {
      const resolution = await host.resolve(s.selection, s.refs);
      if (host.sessions.has(s)) s.update(resolution);
    }),
  );
}

/** The pool's tokens per instance and the sessions' authorization view, with renewals attached to `host`. */
export function wireOAuth(
  oauth: UpstreamOAuth,
  host: RenewHost,
): {
  auth: (ref: InstanceRef, spec: Upstream) => UpstreamAuth | undefined;
  authorization: SessionAuthorization;
} {
  oauth.attach((upstream, principal) => renewAuthorized(host, upstream, principal));
  return {
    auth: (ref, spec) => oauth.auth(ref, spec),
    authorization: {
      upstreamOf: (toolset, tool) => exactUpstream(host.catalog, toolset, tool),
      wait: (ref, signal, ms) => oauth.wait(ref, host.catalog.upstreams.get(ref.upstream), signal, ms),
    },
  };
}
