/** @module The per-request `_meta` envelope of MCP 2026-07-28: read and check it on the way in, stamp results on the way out. */
import { errors, type WireError } from "../wire/errors.js";
import { isRecord, LOG_LEVELS, type LogLevel, META_KEYS, MODERN_VERSION } from "./wire.js";

export interface Implementation {
  readonly name: string;
  readonly version: string;
  readonly [key: string]: unknown;
}

/** What one 2026 request says about its client (basic/index §`_meta`, per-request protocol fields). */
export interface Envelope {
  readonly protocolVersion: string;
  /** Required; `{}` means no optional capability. Never inferred from an earlier request. */
  readonly clientCapabilities: Readonly<Record<string, unknown>>;
  /** A SHOULD: served without it; self-reported, for display and logs only. */
  readonly clientInfo?: Implementation;
  /** Absent: the server MUST NOT send notifications/message for this request. */
  readonly logLevel?: LogLevel;
}

export type EnvelopeRead =
  | { readonly ok: true; readonly envelope: Envelope }
  | { readonly ok: false; readonly refusal: WireError };

/** True for a version string of the modern era: a `YYYY-MM-DD` revision on or after 2026-07-28. */
export function isModernVersion(version: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(version) && version >= MODERN_VERSION;
}

/** `params._meta`, when it is an object. */
export function metaOf(params: unknown): Record<string, unknown> | undefined {
  const meta = isRecord(params) ? params._meta : undefined;
  return isRecord(meta) ? meta : undefined;
}

/** Whether a message claims the per-request envelope: its `_meta` carries the protocol-version key at all. */
export function hasClaim(params: unknown): boolean {
  const meta = metaOf(params);
  return meta !== undefined && META_KEYS.protocolVersion in meta;
}

const invalid = (key: string, problem: string): WireError =>
  errors.badEnvelope(`Invalid params: _meta ${key}: ${problem}`, { invalid: key, problem });

function isImplementation(v: unknown): v is Implementation {
  return isRecord(v) && typeof v.name === "string" && typeof v.version === "string";
}

/**
 * Checks the shape of a 2026 request's envelope, not its version: a missing `_meta` or required key is
 * `-32602` naming every missing key; a malformed key is `-32602` naming it; both go out with HTTP 400.
 */
export function checkEnvelope(params: unknown): EnvelopeRead {
  const meta = metaOf(params);
  if (!meta) {
    return {
      ok: false,
      refusal: errors.badEnvelope("Invalid params: _meta is required", { missing: ["_meta"] }),
    };
  }
  const missing = [META_KEYS.protocolVersion, META_KEYS.clientCapabilities].filter((k) => !(k in meta));
  if (missing.length > 0) {
    const why = `Invalid params: _meta is missing ${missing.join(", ")}`;
    return { ok: false, refusal: errors.badEnvelope(why, { missing }) };
  }
  const version = meta[META_KEYS.protocolVersion];
  if (typeof version !== "string" || version === "") {
    return { ok: false, refusal: invalid(META_KEYS.protocolVersion, "expected a non-empty string") };
  }
  const caps = meta[META_KEYS.clientCapabilities];
  if (!isRecord(caps))
    return { ok: false, refusal: invalid(META_KEYS.clientCapabilities, "expected an object") };
  const info = meta[META_KEYS.clientInfo];
  if (info !== undefined && !isImplementation(info)) {
    return { ok: false, refusal: invalid(META_KEYS.clientInfo, "expected {name: string, version: string}") };
  }
  const level = meta[META_KEYS.logLevel];
  if (level !== undefined && !(LOG_LEVELS as readonly unknown[]).includes(level)) {
    return { ok: false, refusal: invalid(META_KEYS.logLevel, `expected one of ${LOG_LEVELS.join(", ")}`) };
  }
  const envelope: Envelope = {
    protocolVersion: version,
    clientCapabilities: caps,
    ...(info === undefined ? {} : { clientInfo: info }),
    ...(level === undefined ? {} : { logLevel: level as LogLevel }),
  };
  return { ok: true, envelope: Object.freeze(envelope) };
}

/**
 * Reads a 2026 request's envelope: its shape (checkEnvelope), then its version — one not in `supported` is
 * `-32022` whose `data.supported` lists `advertised` (default: `supported`) and `data.requested` echoes it.
 */
export function readEnvelope(
  params: unknown,
  supported: readonly string[] = [MODERN_VERSION],
  advertised: readonly string[] = supported,
): EnvelopeRead {
  const read = checkEnvelope(params);
  if (!read.ok || supported.includes(read.envelope.protocolVersion)) return read;
  return { ok: false, refusal: errors.unsupportedVersion(read.envelope.protocolVersion, advertised) };
}

const REQUEST_KEYS: readonly string[] = [
  META_KEYS.protocolVersion,
  META_KEYS.clientCapabilities,
  META_KEYS.clientInfo,
  META_KEYS.logLevel,
];

/** `_meta` without the per-request envelope keys (what a 2025 upstream should get: progressToken, traceparent, …). */
export function withoutEnvelope(meta: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(meta).filter(([k]) => !REQUEST_KEYS.includes(k)));
}

/** `_meta` for a request this proxy sends to a 2026 upstream: `rest` (e.g. progressToken) plus the envelope. */
export function envelopeMeta(
  envelope: Envelope,
  rest: Readonly<Record<string, unknown>> = {},
): Record<string, unknown> {
  return {
    ...withoutEnvelope(rest),
    [META_KEYS.protocolVersion]: envelope.protocolVersion,
    [META_KEYS.clientCapabilities]: envelope.clientCapabilities,
    ...(envelope.clientInfo ? { [META_KEYS.clientInfo]: envelope.clientInfo } : {}),
    ...(envelope.logLevel ? { [META_KEYS.logLevel]: envelope.logLevel } : {}),
  };
}

/** A result's `resultType`; absent (a 2025 peer) counts as "complete" (basic/index §ResultType). */
export function resultTypeOf(result: unknown): string {
  const t = isRecord(result) ? result.resultType : undefined;
  return typeof t === "string" ? t : "complete";
}

/**
 * A result as a 2026 client must get it: `resultType` present ("complete" when the producer, e.g. a 2025
 * upstream, gave none) and `_meta["io.modelcontextprotocol/serverInfo"]` naming this server (the proxy is
 * the server the client talks to; other `_meta` keys pass through).
 */
export function stampResult(
  result: Readonly<Record<string, unknown>>,
  serverInfo: Implementation,
): Record<string, unknown> {
  const meta = isRecord(result._meta) ? result._meta : {};
  return {
    ...result,
    resultType: resultTypeOf(result),
    _meta: { ...meta, [META_KEYS.serverInfo]: serverInfo },
  };
}

/** A 2026 result made fit for a 2025 client: no `resultType`, no serverInfo stamp, no cache hints. */
export function legacyResult(result: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { resultType: _t, ttlMs: _ttl, cacheScope: _scope, ...rest } = result;
  if (!isRecord(rest._meta)) return rest;
  const { [META_KEYS.serverInfo]: _info, ...meta } = rest._meta;
  return Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : (({ _meta: _m, ...r }) => r)(rest);
}
