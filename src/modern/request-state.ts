/** @module The opaque `requestState` toolpacks mints when it turns a 2025 upstream's server→client request into an `input_required` result. */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { isRecord } from "./wire.js";

/**
 * What a retry must prove (basic/patterns/mrtr §Server requirements 4–5: integrity, principal, expiry, the
 * originating request). Signed, not encrypted: nothing secret goes in.
 */
interface BridgeState {
  /** The waiting bridge: the key of the upstream call parked on some replica (unguessable, single-use there). */
  readonly bridge: string;
  /** The upstream whose server→client request is waiting (the retry must route to it). */
  readonly upstream: string;
  /** Digest of who asked (principal / credential), so another caller cannot present it. */
  readonly owner: string;
  /** Digest of the originating method and params, so it cannot be replayed on another request. */
  readonly request: string;
  /** Expiry, ms since the epoch. */
  readonly exp: number;
  /** 2026↔2026 pass-through: the upstream's own requestState, wrapped so it is bound to our caller. */
  readonly inner?: string;
}

type StateRefusalReason = "malformed" | "signature" | "expired" | "owner" | "request";
type StateCheck =
  | { readonly ok: true; readonly state: BridgeState }
  | { readonly ok: false; readonly reason: StateRefusalReason };

export interface RequestStateCodec {
  /** Seals a state valid for `ttlMs` from now. */
  seal(state: Omit<BridgeState, "exp">): string;
  /** Opens a token presented on a retry by `owner` for the request digested as `request`. */
  open(token: string, expect: { readonly owner: string; readonly request: string }): StateCheck;
}

export interface RequestStateOptions {
  /** HMAC-SHA256 keys, each at least 32 bytes: the first signs, every one verifies (rotation across replicas). */
  readonly keys: readonly Uint8Array[];
  readonly ttlMs: number;
  readonly now: () => number;
}

/** Not "tp1": that prefix is a session id (decision 0003). */
const VERSION = "tprs1";
const DOMAIN = "toolpacks.requestState.v1\0";
/** Our own fields take ~300 bytes; the rest is room for a wrapped upstream state. Refused before any hashing. */
const MAX_LENGTH = 16_384;
const B64URL = /^[A-Za-z0-9_-]+$/;

/** Strict base64url: the alphabet, no padding, and the one canonical spelling of its bytes. */
export function fromBase64url(s: string): Buffer | undefined {
  if (!B64URL.test(s)) return undefined;
  const bytes = Buffer.from(s, "base64url");
  return bytes.toString("base64url") === s ? bytes : undefined;
}

function mac(key: Uint8Array, signed: string): Buffer {
  return createHmac("sha256", key).update(DOMAIN).update(signed).digest();
}

export function createRequestStateCodec(options: RequestStateOptions): RequestStateCodec {
  const keys = options.keys.map((k) => Uint8Array.from(k));
  if (keys.length === 0 || keys.some((k) => k.length < 32)) {
    throw new RangeError("requestState keys must be at least 32 bytes each, and there must be one");
  }
  if (!(options.ttlMs > 0)) throw new RangeError("requestState ttlMs must be positive");

  const seal = (state: Omit<BridgeState, "exp">): string => {
    const body = {
      b: state.bridge,
      u: state.upstream,
      o: state.owner,
      r: state.request,
      e: options.now() + options.ttlMs,
      ...(state.inner === undefined ? {} : { i: state.inner }),
    };
    const signed = `${VERSION}.${Buffer.from(JSON.stringify(body), "utf8").toString("base64url")}`;
    return `${signed}.${mac(keys[0]!, signed).toString("base64url")}`;
  };

  const open = (token: string, expect: { readonly owner: string; readonly request: string }): StateCheck => {
    if (typeof token !== "string" || token.length > MAX_LENGTH) return { ok: false, reason: "malformed" };
    const parts = token.split(".");
    if (parts.length !== 3 || parts[0] !== VERSION) return { ok: false, reason: "malformed" };
    const payload = fromBase64url(parts[1]!);
    const given = fromBase64url(parts[2]!);
    if (!payload || !given || given.length !== 32) return { ok: false, reason: "malformed" };
    const signed = `${parts[0]}.${parts[1]}`;
    if (!keys.some((k) => timingSafeEqual(mac(k, signed), given))) return { ok: false, reason: "signature" };
    let body: unknown;
    try {
      body = JSON.parse(payload.toString("utf8"));
    } catch {
      return { ok: false, reason: "malformed" };
    }
    if (!isRecord(body)) return { ok: false, reason: "malformed" };
    const { b, u, o, r, e, i } = body;
    if (!isString(b) || !isString(u) || !isString(o) || !isString(r) || typeof e !== "number") {
      return { ok: false, reason: "malformed" };
    }
    if (i !== undefined && !isString(i)) return { ok: false, reason: "malformed" };
    if (!(options.now() < e)) return { ok: false, reason: "expired" };
    if (!safeEqual(o, expect.owner)) return { ok: false, reason: "owner" };
    if (!safeEqual(r, expect.request)) return { ok: false, reason: "request" };
    const state: BridgeState = {
      bridge: b,
      upstream: u,
      owner: o,
      request: r,
      exp: e,
      ...(i === undefined ? {} : { inner: i }),
    };
    return { ok: true, state: Object.freeze(state) };
  };

  return Object.freeze({ seal, open });
}

const isString = (v: unknown): v is string => typeof v === "string";

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, "utf8");
  const y = Buffer.from(b, "utf8");
  return x.length === y.length && timingSafeEqual(x, y);
}

/** JSON with object keys sorted at every depth: one spelling per value, for digests. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(",")}]`;
  if (isRecord(value)) {
    const keys = Object.keys(value)
      .filter((k) => value[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** SHA-256 (base64url) of length-prefixed parts, so that ("ab","c") and ("a","bc") differ. */
export function digest(...parts: readonly string[]): string {
  const h = createHash("sha256");
  for (const p of parts) h.update(`${Buffer.byteLength(p)}:`).update(p);
  return h.digest("base64url");
}

/** The digest a retry must match: the method and its params, less `_meta` and the MRTR retry fields. */
export function requestDigest(method: string, params: unknown): string {
  const { _meta: _m, inputResponses: _i, requestState: _s, ...salient } = isRecord(params) ? params : {};
  return digest(method, canonicalJson(salient));
}
