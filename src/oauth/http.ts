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
    throw new OAuthFlowError(code, `${what} is not a URL`);
  }
  if (url.protocol === "https:") return url;
  if (url.protocol === "http:" && isLoopback(url.hostname)) return url;
  // The value is not quoted: it may come from a remote party's document, and the message reaches clients.
  throw new OAuthFlowError(code, `${what} must use https (plain http only on a loopback host)`);
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

/** What a request's answer was: a JSON object, or why not (never quoting more of the answer than its status). */
async function readJson(res: Response): Promise<JsonResult> {
  const json = asObject(await readBody(res));
  if (!res.ok)
    return { ok: false, status: res.status, ...(json ? { json } : {}), reason: `HTTP ${res.status}` };
  if (!json) return { ok: false, status: res.status, reason: "not a JSON object" };
  return { ok: true, status: res.status, json };
}

const failed = (err: unknown): JsonResult => ({
  ok: false,
  status: 0,
  reason: remoteText((err as Error).message) || "request failed",
});

/** Sends a request and reads a JSON object back; network failures and non-JSON answers are `ok: false`. */
async function requestJson(fetch: Fetch, url: string, init: RequestInit): Promise<JsonResult> {
  try {
    return await readJson(await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) }));
  } catch (err) {
    return failed(err);
  }
}

/** Redirects a metadata GET follows at most. */
const MAX_REDIRECTS = 3;

/**
 * May a party at `from` send the proxy to `target`? It must be https, or http on a loopback host; and it may be on
 * this machine's loopback only when `from` is too: an upstream elsewhere cannot point the proxy at its own host.
 */
export function assertReachable(
  target: string,
  from: string,
  what: string,
  code: OAuthFailure = "metadata",
): URL {
  const url = assertSecureUrl(target, what, code);
  if (isLoopback(url.hostname) && !isLoopback(new URL(from).hostname))
    throw new OAuthFlowError(code, `${what} is on this machine's loopback, named from elsewhere: refused`);
  return url;
}

/**
 * GET a JSON object (metadata documents), following at most MAX_REDIRECTS redirects, each checked as the first URL
 * was (assertReachable from `from`, never https down to http): a redirect cannot take the proxy where a URL could not.
 */
export async function getJson(fetch: Fetch, url: string, from: string = url): Promise<JsonResult> {
  let current = url;
  for (let hop = 0; ; hop++) {
    let res: Response;
    try {
      res = await fetch(current, {
        headers: { accept: "application/json" },
        redirect: "manual",
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (err) {
      return failed(err);
    }
    const location = res.status >= 300 && res.status < 400 ? res.headers.get("location") : null;
    if (location === null) {
      try {
        return await readJson(res);
      } catch (err) {
        return failed(err);
      }
    }
    await res.body?.cancel().catch(() => {});
    if (hop >= MAX_REDIRECTS) return { ok: false, status: res.status, reason: "too many redirects" };
    try {
      const next = new URL(location, current);
      assertReachable(next.href, from, "a redirect");
      if (new URL(current).protocol === "https:" && next.protocol !== "https:") throw new Error("downgrade");
      current = next.href;
    } catch {
      return {
        ok: false,
        status: res.status,
        reason: "redirected where the proxy may not follow (plain http, or this machine's loopback)",
      };
    }
  }
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

/** An RFC 6749 §5.2 error code: printable ASCII without `"` or `\`, short. */
const ERROR_CODE = /^[\x20\x21\x23-\x5b\x5d-\x7e]{1,64}$/;

/**
 * An OAuth error answer as one safe line: its `error` code when it is one, else the status. The free text of
 * `error_description` is not quoted (a remote party wrote it, and it would reach clients in `/toolsets`).
 */
export function oauthErrorText(r: JsonResult, secrets: readonly (string | undefined)[] = []): string {
  const error = typeof r.json?.error === "string" && ERROR_CODE.test(r.json.error) ? r.json.error : "";
  if (error) return remoteText(error, secrets);
  return r.ok ? `HTTP ${r.status}` : r.reason;
}
