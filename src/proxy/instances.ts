/**
 * @module Which upstream instance a session uses, from the catalog and the credential headers its request
 * carries: the shared one, one per distinct credential values (`forward_headers`, `header_env`), or its own
 * (`isolation: per-session`). Also what a session is bound to: the exact credential values it was opened with.
 */
import type { IncomingHttpHeaders } from "node:http";
import type { Catalog, Upstream } from "../catalog/types.js";
import {
  credentialRef,
  type InstanceRef,
  principalRef,
  sessionRef,
  sharedRef,
  type Variant,
  valuesDigest,
} from "../upstream/instance.js";

/** The credential headers a client sent for some upstreams: names asked for, and the values present. */
export interface Credentials {
  /** Every header name those upstreams read credentials from (lower case). */
  readonly names: readonly string[];
  readonly values: Readonly<Record<string, string>>;
  /** Who opened the session (a principal's subject), when some upstream is per-user: it is bound to it too. */
  readonly principal?: string;
}

function pick(
  headers: IncomingHttpHeaders | Readonly<Record<string, string>>,
  name: string,
): string | undefined {
  const v = headers[name];
  const s = Array.isArray(v) ? v.join(", ") : v;
  return s === undefined || s === "" ? undefined : s;
}

/** The header names an upstream reads credentials from. */
export function credentialNames(spec: Upstream): string[] {
  return spec.transport === "http" ? [...spec.forwardHeaders] : Object.keys(spec.headerEnv);
}

/** What the client's headers carry for an upstream, or undefined when it forwards none. */
function variantOf(
  spec: Upstream,
  headers: IncomingHttpHeaders | Readonly<Record<string, string>>,
): Variant | undefined {
  const found: [string, string][] = [];
  if (spec.transport === "http") {
    for (const h of spec.forwardHeaders) {
      const v = pick(headers, h);
      if (v !== undefined) found.push([h, v]);
    }
    return found.length ? { headers: Object.fromEntries(found) } : undefined;
  }
  for (const [h, env] of Object.entries(spec.headerEnv)) {
    const v = pick(headers, h);
    if (v !== undefined) found.push([env, v]);
  }
  return found.length ? { env: Object.fromEntries(found) } : undefined;
}

/**
 * For each upstream: its own instance when per-session (given a session key), one per distinct credential
 * values, else the shared one. Without a session key (a report), a per-session upstream is read through the
 * instance its credentials would give, else the shared one.
 */
export function refsOf(
  catalog: Catalog,
  upstreams: readonly string[],
  headers: IncomingHttpHeaders | Readonly<Record<string, string>>,
  sessionKey?: string,
  principal?: string,
): Map<string, InstanceRef> {
  const out = new Map<string, InstanceRef>();
  for (const name of upstreams) {
    const spec = catalog.upstreams.get(name);
    if (!spec) continue;
    const variant = variantOf(spec, headers);
    // A per-user OAuth upstream: the principal's own instance, carrying its tokens only.
    const perUser = spec.oauth?.mode === "per-user";
    if (spec.isolation === "per-session" && sessionKey !== undefined)
      out.set(name, sessionRef(name, sessionKey, variant, perUser ? principal : undefined));
    else if (perUser) out.set(name, principalRef(name, principal, variant));
    else if (variant) out.set(name, credentialRef(name, variant));
    else out.set(name, sharedRef(name));
  }
  return out;
}

/**
 * The instances a report (GET /toolsets) reads: one already running for these credentials, else the shared one;
 * never a new per-credential or per-session one. A per-user OAuth upstream is read through the principal's own
 * instance, made if needed (an HTTP session, not a process) and let go after the idle time (call `release`).
 */
export function reportRefs(
  catalog: Catalog,
  pool: {
    existing(ref: InstanceRef): unknown;
    acquire(ref: InstanceRef): unknown;
    release(ref: InstanceRef): void;
  },
  upstreams: readonly string[],
  headers: IncomingHttpHeaders | Readonly<Record<string, string>>,
  principal?: string,
): { refs: Map<string, InstanceRef>; release(): void } {
  const refs = new Map<string, InstanceRef>();
  const held: InstanceRef[] = [];
  for (const [name, ref] of refsOf(catalog, upstreams, headers, undefined, principal)) {
    if (ref.principal !== undefined && ref.kind === "credential") {
      pool.acquire(ref);
      held.push(ref);
    }
    refs.set(name, ref.kind === "shared" || pool.existing(ref) ? ref : sharedRef(name));
  }
  return {
    refs,
    release: () => {
      for (const r of held) pool.release(r);
    },
  };
}

/** The credential headers of these upstreams in a request: kept by a session so a reload can place it again. */
export function credentialsOf(
  catalog: Catalog,
  upstreams: readonly string[],
  headers: IncomingHttpHeaders | Readonly<Record<string, string>>,
  principal?: string,
): Credentials {
  const { names, perUser } = credentialHeaders(catalog, upstreams);
  const values: Record<string, string> = {};
  for (const h of names) {
    const v = pick(headers, h);
    if (v !== undefined) values[h] = v;
  }
  return perUser && principal !== undefined ? { names, values, principal } : { names, values };
}

/**
 * The header names a list of upstreams reads credentials from (sorted), and whether one of them is per-user:
 * worked out once per list (a caller's upstreams are one frozen list per selection, see door/caller.ts).
 */
const headersOf = new WeakMap<
  readonly string[],
  { catalog: Catalog; names: readonly string[]; perUser: boolean }
>();
function credentialHeaders(
  catalog: Catalog,
  upstreams: readonly string[],
): { names: readonly string[]; perUser: boolean } {
  const known = headersOf.get(upstreams);
  if (known?.catalog === catalog) return known;
  const names = new Set<string>();
  let perUser = false;
  for (const u of upstreams) {
    const spec = catalog.upstreams.get(u);
    if (spec) for (const h of credentialNames(spec)) names.add(h);
    if (spec?.oauth?.mode === "per-user") perUser = true;
  }
  const worked = { catalog, names: Object.freeze([...names].sort()), perUser };
  // Only a list that cannot change is kept by identity: a caller's own array could be changed after.
  if (Object.isFrozen(upstreams)) headersOf.set(upstreams, worked);
  return worked;
}

const NO_VALUES = valuesDigest({});

/**
 * A digest of exactly the credential values a request carries (and, with a per-user upstream, who it is): a
 * session serves only requests that match.
 */
export function bindingOf(credentials: Credentials): string {
  const { values, principal } = credentials;
  // A key no header name can take (header names have no spaces).
  if (principal !== undefined) return valuesDigest({ ...values, "per-user principal": principal });
  return Object.keys(values).length === 0 ? NO_VALUES : valuesDigest(values);
}

/** Resolutions are shared by selection and by the instances they were computed against. */
export function cacheKey(selectionKey: string, refs: ReadonlyMap<string, InstanceRef>): string {
  let key = selectionKey;
  for (const ref of refs.values()) if (ref.kind !== "shared") key += `|${ref.id}`;
  return key;
}

/** What such a session answers may depend on who asks: it carries credentials, or uses a non-shared instance. */
export function dependsOnCaller(credentials: Credentials, refs: ReadonlyMap<string, InstanceRef>): boolean {
  return Object.keys(credentials.values).length > 0 || [...refs.values()].some((r) => r.kind !== "shared");
}
