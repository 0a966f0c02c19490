/** @module The one stored form of a value (shared by both stores, so both count the same bytes), and key checks. */
import { createHash } from "node:crypto";
import type { StoredValue, ValueInfo } from "./types.js";

/** What a store keeps for one value: the body (text and structure, once) and the small info a listing reads. */
export interface Encoded {
  readonly body: string;
  readonly info: string;
  /** Stored bytes: body + info, UTF-8. What the budgets count. */
  readonly size: number;
}

interface Body {
  t?: string;
  s?: unknown;
  /** The text is exactly the structure's JSON: kept once. */
  j?: 1;
}

export function encodeValue(value: StoredValue): Encoded {
  const body: Body = {};
  if (value.structured === undefined) body.t = value.text;
  else {
    body.s = value.structured;
    if (JSON.stringify(value.structured) === value.text) body.j = 1;
    else body.t = value.text;
  }
  const bodyText = JSON.stringify(body);
  const info = JSON.stringify({ b: value.bytes, m: value.meta });
  return { body: bodyText, info, size: Buffer.byteLength(bodyText) + Buffer.byteLength(info) };
}

export function decodeValue(body: string, info: string): StoredValue {
  const b = JSON.parse(body) as Body;
  const i = JSON.parse(info) as { b: number; m: Record<string, unknown> };
  const text = b.j === 1 ? JSON.stringify(b.s) : (b.t ?? "");
  return b.s === undefined
    ? { text, bytes: i.b, meta: i.m }
    : { text, structured: b.s, bytes: i.b, meta: i.m };
}

export function decodeInfo(key: string, size: number, info: string): ValueInfo {
  const i = JSON.parse(info) as { b: number; m: Record<string, unknown> };
  return { key, size, bytes: i.b, meta: i.m };
}

/** A digest for anything that must not appear in a key in the clear (session ids, record keys). */
export function digest(text: string): string {
  return createHash("sha256").update(text).digest("base64url");
}

const OWNER = /^[A-Za-z0-9_\-.+/=]{1,256}$/;
const NAMESPACE = /^[A-Za-z0-9_-]{1,64}$/;

/** Owners are digests: no `:` (the key separator), no spaces, bounded. A wrong one is a programming error. */
export function checkOwner(owner: string, key?: string): void {
  if (!OWNER.test(owner)) throw new TypeError("state owner must be a digest (1-256 of A-Za-z0-9_-.+/=)");
  if (key !== undefined && (key.length === 0 || key.length > 1024)) {
    throw new TypeError("state key must be 1-1024 characters");
  }
}

export function checkNamespace(namespace: string): void {
  if (!NAMESPACE.test(namespace)) throw new TypeError("state namespace must be 1-64 of A-Za-z0-9_-");
}

export function checkTtl(ttlMs: number): void {
  if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0)
    throw new TypeError("state ttlMs must be a positive integer");
}
