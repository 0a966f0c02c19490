/** @module Which upstream instance a session uses: shared, per forwarded credential, or its own. */
import { createHash } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { Catalog, Upstream } from "../catalog/types.js";
import type { Selection } from "../selection.js";
import type { Instance } from "../upstream/pool.js";

/**
 * For each upstream of a session: its own instance (`isolation: per-session`), one per distinct credential
 * (`forward_headers`, `header_env`), or none listed (the shared one). A report (no session id) lists a
 * per-session upstream through its shared instance.
 */
export function instancesOf(
  catalog: Catalog,
  upstreams: readonly string[],
  headers: IncomingHttpHeaders,
  sessionId: string | undefined,
): Map<string, Instance> {
  const out = new Map<string, Instance>();
  for (const name of upstreams) {
    const spec = catalog.upstreams.get(name);
    if (!spec) continue;
    const variant = credentialsOf(spec, headers);
    if (spec.isolation === "per-session" && sessionId) {
      out.set(name, { key: `session:${sessionId}`, ...(variant ? { variant } : {}) });
    } else if (variant) out.set(name, { key: `cred:${digest(variant)}`, variant });
  }
  return out;
}

/** Resolutions are shared by selection and by the non-shared instances they were computed against. */
export function cacheKey(selection: Selection, instances: ReadonlyMap<string, Instance>): string {
  if (!instances.size) return selection.key;
  return `${selection.key}|${[...instances].map(([u, i]) => `${u}=${i.key}`).join(",")}`;
}

/** The credentials a client's headers carry for an upstream, or undefined when it forwards none. */
export function credentialsOf(spec: Upstream, headers: IncomingHttpHeaders): Instance["variant"] | undefined {
  const pick = (h: string) => {
    const v = headers[h];
    return Array.isArray(v) ? v.join(", ") : v;
  };
  if (spec.transport === "http") {
    const found = spec.forwardHeaders
      .map((h) => [h, pick(h)] as const)
      .filter(([, v]) => v !== undefined && v !== "");
    return found.length ? { headers: Object.fromEntries(found) as Record<string, string> } : undefined;
  }
  const found = Object.entries(spec.headerEnv)
    .map(([h, env]) => [env, pick(h)] as const)
    .filter(([, v]) => v !== undefined && v !== "");
  return found.length ? { env: Object.fromEntries(found) as Record<string, string> } : undefined;
}

/** A short digest of credential values: instance keys and logs carry it, never the values. */
function digest(variant: NonNullable<Instance["variant"]>): string {
  const entries = Object.entries({ ...variant.headers, ...variant.env }).sort(([a], [b]) => (a < b ? -1 : 1));
  return createHash("sha256").update(JSON.stringify(entries)).digest("hex").slice(0, 16);
}
