/** @module The OAuth client's HTTP: JSON documents and form posts, bounded in time and size, secure by default. */
import { type OAuthFailure, OAuthFlowError, remoteText } from "./errors.js";

export type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

const TIMEOUT_MS = 15_000;
const MAX_BYTES = 256 * 1024;

/** AS and metadata endpoints must be https; plain http only on a loopback host (development, tests). */
export function assertSecureUrl(value: string, what: string, code: OAuthFailure = "metadata"): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new OAuthFlowError(code, `${what} is not a URL: ${remoteText(value)}`);
  }
  if (url.protocol === "https:") return url;
  if (url.protocol === "http:" && isLoopback(url.hostname)) return url;
  throw new OAuthFlowError(code, `${what} must use https (got ${url.protocol}//${url.host})`);
}

export function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127(\.\d{1,3}){3}$/.test(hostname);
}

async function readBody(res: Response): Promise<string> {
  const len = Number(res.headers.get("content-length") ?? 0);
  if (len > MAX_BYTES) throw new Error(`response of ${len} bytes is too large`);
  const text = await res.text();
  if (text.length > MAX_BYTES) throw new Error("response is too large");
  return text;
}

export type JsonResult =
  | { ok: true; status: number; json: Record<string, unknown> }
  | { ok: false; status: number; json?: Record<string, unknown>; reason: string };

function asObject(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === "object" && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Sends a request and reads a JSON object back; network failures and non-JSON answers are `ok: false`. */
async function requestJson(fetch: Fetch, url: string, init: RequestInit): Promise<JsonResult> {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
    const json = asObject(await readBody(res));
    if (!res.ok)
      return { ok: false, status: res.status, ...(json ? { json } : {}), reason: `HTTP ${res.status}` };
    if (!json) return { ok: false, status: res.status, reason: "not a JSON object" };
    return { ok: true, status: res.status, json };
  } catch (err) {
    return { ok: false, status: 0, reason: remoteText((err as Error).message) || "request failed" };
  }
}

/** GET a JSON object (metadata documents). */
export function getJson(fetch: Fetch, url: string): Promise<JsonResult> {
  return requestJson(fetch, url, { headers: { accept: "application/json" } });
}

/** POST a body (form or JSON) and read a JSON object back; redirects are not followed. */
export function postForJson(
  fetch: Fetch,
  url: string,
  body: URLSearchParams | string,
  headers: Record<string, string>,
): Promise<JsonResult> {
  return requestJson(fetch, url, {
    method: "POST",
    headers: { accept: "application/json", ...headers },
    body,
    redirect: "manual",
  });
}

/** The `error` / `error_description` of an OAuth error answer, as one safe line. */
export function oauthErrorText(r: JsonResult, secrets: readonly (string | undefined)[] = []): string {
  const error = remoteText(r.json?.error, secrets);
  const description = remoteText(r.json?.error_description, secrets);
  if (error) return description ? `${error} (${description})` : error;
  return r.ok ? `HTTP ${r.status}` : r.reason;
}
