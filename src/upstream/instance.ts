/**
 * @module Which running instance of an upstream a session talks to: a typed value, never a string to parse.
 * The shared instance serves every session that brings no credentials; a credential instance serves the
 * sessions that bring the same credential values; a session instance serves exactly one session.
 */
import { createHash } from "node:crypto";

/** Credential values a client's request carries for one upstream: forwarded headers (HTTP) or env (stdio). */
export interface Variant {
  readonly headers?: Readonly<Record<string, string>>;
  readonly env?: Readonly<Record<string, string>>;
}

type InstanceKind = "shared" | "credential" | "session";

export interface InstanceRef {
  readonly upstream: string;
  readonly kind: InstanceKind;
  /** A digest: of the credential values, or of the session. Never a credential or a session id itself. */
  readonly key: string;
  /** The identity of the instance: a map key made here and only here, never parsed. */
  readonly id: string;
  /** The credential values this instance is started with (never logged, never shown). */
  readonly variant?: Variant;
  /** A per-user OAuth upstream: the principal (subject) whose tokens this instance carries; nobody else's. */
  readonly principal?: string;
}

const digest = (domain: string, text: string) =>
  createHash("sha256").update(domain).update("\0").update(text).digest("hex").slice(0, 32);

function make(
  upstream: string,
  kind: InstanceKind,
  key: string,
  variant?: Variant,
  principal?: string,
): InstanceRef {
  return Object.freeze({
    upstream,
    kind,
    key,
    id: `${kind}\u0000${upstream}\u0000${key}`,
    ...(variant ? { variant } : {}),
    ...(principal !== undefined ? { principal } : {}),
  });
}

export function sharedRef(upstream: string): InstanceRef {
  return make(upstream, "shared", "shared");
}

/** Equal credential values give an equal ref: sessions that bring them share one instance. */
export function credentialRef(upstream: string, variant: Variant): InstanceRef {
  return make(upstream, "credential", variantDigest(variant), variant);
}

/** `sessionKey`: any unique, unguessable value of the session (its digest is what the ref keeps). */
export function sessionRef(
  upstream: string,
  sessionKey: string,
  variant?: Variant,
  principal?: string,
): InstanceRef {
  return make(upstream, "session", digest("toolpacks-session", sessionKey), variant, principal);
}

/**
 * A per-user OAuth upstream's instance: one per principal (and credential values, if it also forwards some),
 * never shared across principals. `principal` undefined: nobody signed in (the instance can never authorize).
 */
export function principalRef(
  upstream: string,
  principal: string | undefined,
  variant?: Variant,
): InstanceRef {
  const key = digest(
    "toolpacks-principal",
    JSON.stringify([principal ?? null, variant ? variantDigest(variant) : ""]),
  );
  return make(upstream, "credential", key, variant, principal);
}

/** A stable, order-independent digest of named values (credential headers, their env): never the values. */
export function valuesDigest(values: Readonly<Record<string, string>>): string {
  const entries = Object.entries(values).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return digest("toolpacks-credential", JSON.stringify(entries));
}

/** Equal credential values give an equal digest, whichever way they reach the upstream. */
function variantDigest(variant: Variant): string {
  const values: Record<string, string> = {};
  for (const [k, v] of Object.entries(variant.headers ?? {})) values[`h:${k}`] = v;
  for (const [k, v] of Object.entries(variant.env ?? {})) values[`e:${k}`] = v;
  return valuesDigest(values);
}

/**
 * Whether an instance serves exactly one client by construction: a per-session instance, and every instance of a
 * process that serves one client (`serve --transport stdio`). Such an instance's untied traffic (sampling,
 * elicitation, roots, log lines) is that client's; an instance several clients may share delivers only what is
 * tied to a call (SPEC §10.5). Ownership, never a count of who happens to use it.
 */
export function servesOneClient(ref: InstanceRef, oneClient: boolean): boolean {
  return ref.kind === "session" || oneClient;
}

/** For logs and metrics: the kind and a short prefix of the digest. */
export function refLabel(ref: InstanceRef): string {
  return ref.kind === "shared" ? "shared" : `${ref.kind}:${ref.key.slice(0, 8)}`;
}
