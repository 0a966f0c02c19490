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
  /** The text is the structure's JSON: 1 compact, 2 indented by two spaces (what most SDK servers send). */
  j?: 1 | 2;
  /** The text is the structure's own string field of this name (server-filesystem: `{content: text}`). */
  f?: string;
}

/** How the text can be rebuilt from the structure, so that only one of them is kept. */
function textFrom(structured: unknown, text: string): Pick<Body, "j" | "f"> | undefined {
  if (structured && typeof structured === "object" && !Array.isArray(structured)) {
    for (const [k, v] of Object.entries(structured)) if (v === text) return { f: k };
  }
  // Cheap checks first: a JSON text starts like its structure, and stringify is only worth it then.
  const first = text.trimStart()[0];
  if (first !== "{" && first !== "[") return undefined;
  if (JSON.stringify(structured) === text) return { j: 1 };
  if (JSON.stringify(structured, null, 2) === text) return { j: 2 };
  return undefined;
}

export function encodeValue(value: StoredValue): Encoded {
  let body: Body;
  if (value.structured === undefined) body = { t: value.text };
  else body = { s: value.structured, ...(textFrom(value.structured, value.text) ?? { t: value.text }) };
  const bodyText = JSON.stringify(body);
  const info = JSON.stringify({ b: value.bytes, m: value.meta });
  return { body: bodyText, info, size: Buffer.byteLength(bodyText) + Buffer.byteLength(info) };
}

export function decodeValue(body: string, info: string): StoredValue {
  const b = JSON.parse(body) as Body;
  const i = JSON.parse(info) as { b: number; m: Record<string, unknown> };
  let text = b.t ?? "";
  if (b.j === 1) text = JSON.stringify(b.s);
  else if (b.j === 2) text = JSON.stringify(b.s, null, 2);
  else if (b.f !== undefined) text = String((b.s as Record<string, unknown>)[b.f]);
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
