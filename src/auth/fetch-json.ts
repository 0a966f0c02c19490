/** @module Bounded JSON requests to an authorization server: a timeout, a size cap, and errors without secrets. */

const FETCH_TIMEOUT_MS = 5_000;
const MAX_BYTES = 1 << 20;

/** An authorization server did not answer usefully. The message names the URL and status only. */
export class AuthServerError extends Error {
  constructor(
    message: string,
    /** 404 and the like: "no document here" (try the next discovery URL), as opposed to "unreachable". */
    readonly notFound = false,
  ) {
    super(message);
    this.name = "AuthServerError";
  }
}

/** The URL without credentials, query or fragment: what may appear in a log or an error. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return "(invalid URL)";
  }
}

/** GET or POST, then read at most 1 MiB of JSON object. Throws AuthServerError. */
export async function fetchJson(
  fetchFn: typeof fetch,
  url: string,
  init: RequestInit,
  closing: AbortSignal,
): Promise<Record<string, unknown>> {
  const where = displayUrl(url);
  let res: Response;
  try {
    res = await fetchFn(url, {
      ...init,
      redirect: "error",
      signal: AbortSignal.any([closing, AbortSignal.timeout(FETCH_TIMEOUT_MS)]),
    });
  } catch (e) {
    const why =
      e instanceof Error && e.name === "TimeoutError" ? `timed out after ${FETCH_TIMEOUT_MS} ms` : "failed";
    throw new AuthServerError(`request to ${where} ${why}`);
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => {});
    throw new AuthServerError(
      `${where} answered HTTP ${res.status}`,
      res.status === 404 || res.status === 410,
    );
  }
  const text = await readCapped(res, where);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new AuthServerError(`${where} did not answer JSON`);
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new AuthServerError(`${where} did not answer a JSON object`);
  }
  return body as Record<string, unknown>;
}

async function readCapped(res: Response, where: string): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > MAX_BYTES) {
        await reader.cancel().catch(() => {});
        throw new AuthServerError(`${where} answered more than ${MAX_BYTES} bytes`);
      }
      chunks.push(value);
    }
  } catch (e) {
    if (e instanceof AuthServerError) throw e;
    throw new AuthServerError(`reading the answer of ${where} failed`);
  }
  return Buffer.concat(chunks).toString("utf8");
}
