/**
 * @module Who is calling, worked out once per request as one frozen value: the principal, the selection it may
 * have, the credential values it carries for that selection's upstreams and their digest, the client that
 * per-client limits count, and whose contexts and values it owns. Every limit, binding check and instance a
 * request gets is read off this value; nothing recomputes any part of it.
 */
import { createHash } from "node:crypto";
import { identityKey } from "../auth/requirements.js";
import type { Principal } from "../auth/types.js";
import type { Catalog } from "../catalog/types.js";
import { bindingOf, type Credentials, credentialsOf, refsOf } from "../proxy/instances.js";
import type { Selection } from "../selection.js";
import type { InstanceRef } from "../upstream/instance.js";
import type { Headers } from "./arrival.js";
import { clientKeyOf, type TrustedProxies } from "./client-key.js";

export type Era = "2025" | "2026-07-28";

export interface Caller {
  readonly era: Era;
  readonly principal: Principal | undefined;
  /** `identityKey(principal)`: who it is across its tokens. */
  readonly identity: string | undefined;
  /** The key per-client limits count under (SPEC §7.6): a principal, a token's digest, or an address. */
  readonly client: string;
  readonly selection: Selection;
  /** The URL query it came with (a signed session id seals it). */
  readonly query: string;
  /** The upstreams its selection needs. */
  readonly upstreams: readonly string[];
  /** The credential headers it sent for those upstreams (and its identity, where one is per user). */
  readonly credentials: Credentials;
  /** A digest of `credentials`: a session serves only requests with the same. */
  readonly binding: string;
  /**
   * Whose 2026-07-28 context, request states and captured values these are: a digest of the credential values it
   * carries for any upstream of the config (not only the selected ones: its values are its own on every selection,
   * SPEC §8.5) and of its identity.
   */
  readonly owner: string;
  /** It carries no credential value for any upstream and has no identity: what it captures is bearer values. */
  readonly bearer: boolean;
}

/**
 * The upstreams a selection needs, catalog order: one frozen list per selection value and catalog (selections are
 * frozen and kept by the gateway, so a session's requests and a URL's all find theirs made).
 */
const needed = new WeakMap<Selection, { catalog: Catalog; upstreams: readonly string[] }>();
function upstreamsOf(catalog: Catalog, selection: Selection): readonly string[] {
  const known = needed.get(selection);
  if (known?.catalog === catalog) return known.upstreams;
  const out = new Set<string>();
  for (const n of selection.active) for (const u of catalog.toolset.get(n)?.upstreams ?? []) out.add(u);
  const upstreams = Object.freeze([...out]);
  needed.set(selection, { catalog, upstreams });
  return upstreams;
}

export interface CallerInput {
  readonly era: Era;
  readonly principal: Principal | undefined;
  readonly selection: Selection;
  readonly query: string;
  readonly headers: Headers;
  /** The connection's peer address. */
  readonly address: string;
  /** Proxies whose X-Forwarded-For names the client. */
  readonly proxies: TrustedProxies;
  /** `auth:` is on: the bearer token names the client. */
  readonly authenticated: boolean;
  /** IPv6 clients count by this prefix (`limits.ipv6_prefix`). */
  readonly ipv6Prefix?: number;
}

/** Who a principal is across its tokens: the caller's `identity`, and what the console's reports read under. */
export function identityOf(principal: Principal | undefined): string | undefined {
  return principal && identityKey(principal);
}

export function callerOf(catalog: Catalog, input: CallerInput): Caller {
  const { principal, selection } = input;
  const identity = identityOf(principal);
  const client = clientKeyOf(input.address, input.headers, {
    proxies: input.proxies,
    authenticated: input.authenticated,
    ...(input.ipv6Prefix !== undefined ? { ipv6Prefix: input.ipv6Prefix } : {}),
    ...(identity !== undefined ? { principal: identity } : {}),
  });
  const upstreams = upstreamsOf(catalog, selection);
  const credentials = credentialsOf(catalog, upstreams, input.headers as never, identity);
  const binding = bindingOf(credentials);
  const carried = credentialsOf(catalog, allUpstreams(catalog), input.headers as never).values;
  return Object.freeze({
    era: input.era,
    principal,
    identity,
    client,
    selection,
    query: input.query,
    upstreams,
    credentials,
    binding,
    owner: ownerOf(bindingOf({ names: [], values: carried }), identity),
    bearer: identity === undefined && Object.keys(carried).length === 0,
  });
}

const everyUpstream = new WeakMap<Catalog, readonly string[]>();
/** Every upstream of a catalog (made once per catalog). */
function allUpstreams(catalog: Catalog): readonly string[] {
  const known = everyUpstream.get(catalog);
  if (known) return known;
  const names = Object.freeze([...catalog.upstreams.keys()]);
  everyUpstream.set(catalog, names);
  return names;
}

/**
 * Whose a context is: a digest of the credential values and, with `auth:`, of the identity (SPEC §11.3), so two
 * subjects never share a context, its handles or its request states. Two callers that carry the same values for
 * the selection but not for other upstreams get two contexts: each keeps its own values.
 */
function ownerOf(binding: string, identity: string | undefined): string {
  if (identity === undefined) return binding;
  return createHash("sha256").update(`toolpacks context owner\0${binding}\0${identity}`).digest("base64url");
}

/**
 * The instance of each upstream a caller gets, for a session made from `sessionKey`: the instance it then uses
 * and the slot admission reserves are this one value's.
 */
export function instancesOf(catalog: Catalog, caller: Caller, sessionKey: string): Map<string, InstanceRef> {
  return refsOf(catalog, caller.upstreams, caller.credentials.values, sessionKey, caller.identity);
}
