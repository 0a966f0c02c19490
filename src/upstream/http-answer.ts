/**
 * @module What an HTTP upstream's answer means when it is not an MCP message: the typed errors of the HTTP
 * transport, "session gone" recognition, and one-line reasons for endpoints that do not speak MCP. Pure.
 */

/** Any text quoted from an upstream's answer is cut to this many characters, on one line. */
const QUOTE_MAX = 200;

/**
 * The upstream no longer knows our session (it restarted, or expired it) and refused the request before
 * processing it: a new session may be initialized and the request sent again.
 */
export class SessionGoneError extends Error {
  override readonly name: string = "SessionGoneError";
  constructor(
    readonly status: number,
    detail: string,
  ) {
    super(`the upstream no longer knows our session (HTTP ${status}${detail ? `: ${detail}` : ""})`);
  }
}

/**
 * A 2026-07-28 request refused with a 4xx that answers none of our requests (a 2025 server's "Mcp-Session-Id
 * header is required", say): it was not processed; the upstream's era is probed again and the request replayed.
 */
export class EraRefusedError extends SessionGoneError {
  override readonly name: string = "EraRefusedError";
  constructor(status: number, detail: string) {
    super(status, detail);
    this.message = `the upstream refused a 2026-07-28 request (HTTP ${status}${detail ? `: ${detail}` : ""}); it may speak 2025 only`;
  }
}

/** An HTTP answer that is not MCP (a web page, a refusal, a redirect, a server error): `message` is one line. */
export class UpstreamHttpError extends Error {
  override readonly name = "UpstreamHttpError";
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** No answer at all: the upstream could not be reached (refused, reset, DNS, TLS, timeout before headers). */
export class UpstreamUnreachableError extends Error {
  override readonly name = "UpstreamUnreachableError";
  readonly code: string | undefined;
  constructor(cause: unknown) {
    const c = cause as { message?: string; code?: string; cause?: { code?: string; message?: string } };
    super(oneLine(c?.cause?.message ?? c?.message ?? String(cause)), { cause });
    this.code = c?.code ?? c?.cause?.code;
  }
}

/**
 * The answer stream of a request ended or broke before its response: the request may have been processed,
 * so it is never sent again.
 */
export class StreamBrokenError extends Error {
  override readonly name = "StreamBrokenError";
}

/** What the transport read of a refused or non-MCP answer (the body only in part). */
export interface Answer {
  readonly status: number;
  /** Media type, lower case, without parameters ("" when absent). */
  readonly contentType: string;
  readonly body: string;
  readonly location?: string | undefined;
}

/** Whitespace collapsed, cut to `max` characters. */
export function oneLine(text: string, max = QUOTE_MAX): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

export function mediaType(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return (value ?? "").split(";")[0]!.trim().toLowerCase();
}

/** The message a body carries: a JSON-RPC error's, a JSON `error`/`message`, an HTML title, or its text. */
export function bodyMessage(answer: Answer): string {
  const { body, contentType } = answer;
  if (!body.trim()) return "";
  try {
    const json = JSON.parse(body) as {
      error?: { message?: unknown } | string;
      message?: unknown;
      error_description?: unknown;
    };
    const text =
      (typeof json.error === "object" ? json.error?.message : json.error) ??
      json.error_description ??
      json.message;
    if (typeof text === "string") return oneLine(text);
  } catch {}
  if (contentType === "text/html" || /^\s*<(!doctype|html)/i.test(body)) {
    const title = /<title[^>]*>([^<]*)<\/title>/i.exec(body)?.[1];
    return title ? oneLine(title) : "";
  }
  return oneLine(body);
}

const GONE = /session|not initiali[sz]ed|before initiali[sz]ation/i;

/**
 * Whether a refusal means "session gone" (see SPEC §7.1): a 404 to a request that carried a session id; or,
 * within an initialized session, a 400 whose message names the session or says the server is not initialized,
 * or any 4xx carrying a JSON-RPC error that says so. Returns the quoted detail, or undefined.
 */
function sessionGone(answer: Answer, carriedSession: boolean, initialized: boolean): string | undefined {
  if (!initialized || answer.status < 400 || answer.status >= 500) return undefined;
  const detail = bodyMessage(answer);
  if (answer.status === 404 && carriedSession) return detail || "Not Found";
  if (GONE.test(detail) && (answer.status === 400 || isJsonRpcError(answer.body))) return detail;
  return undefined;
}

/**
 * A 2xx body that is nothing but a JSON-RPC error answering request `id` (or none: `id: null`) whose message says
 * the session is gone: its quoted message, or undefined. Only a hint: such an error is usually the upstream's
 * real answer (a tool about sessions of its own), so the transport confirms it before taking it for session gone.
 */
export function goneInBand(body: string, id: string | number): string | undefined {
  let m: { jsonrpc?: unknown; id?: unknown; error?: { message?: unknown } | null; result?: unknown };
  try {
    m = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (!m || typeof m !== "object" || Array.isArray(m) || m.jsonrpc !== "2.0") return undefined;
  if (m.result !== undefined || (m.id !== id && m.id !== null)) return undefined;
  const message = m.error && typeof m.error === "object" ? m.error.message : undefined;
  return typeof message === "string" && GONE.test(message) ? oneLine(message) : undefined;
}

function isJsonRpcError(body: string): boolean {
  try {
    const m = JSON.parse(body) as { jsonrpc?: unknown; error?: unknown };
    return m.jsonrpc === "2.0" && typeof m.error === "object" && m.error !== null;
  } catch {
    return false;
  }
}

const REASONS: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  415: "Unsupported Media Type",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

const SSE_SERVER = "an SSE-only server (the older HTTP+SSE transport), which toolpacks does not speak";
const SSE_ONLY = `it may be ${SSE_SERVER}`;

/** Where a redirect points, without credentials, query or fragment (they may hold secrets). */
function safeTarget(location: string, base: URL): string {
  try {
    const u = new URL(location, base);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return oneLine(location, 80).replace(/[?#].*$/, "");
  }
}

/** One line saying why an answer is not MCP over Streamable HTTP, and what to check. */
function describeAnswer(answer: Answer, url: URL, method: "POST" | "GET" = "POST"): string {
  const { status, contentType } = answer;
  const said = bodyMessage(answer);
  const quote = said ? `: ${said}` : "";
  const code = `${status}${REASONS[status] ? ` ${REASONS[status]}` : ""}`;
  if (status >= 300 && status < 400) {
    return answer.location
      ? `the server redirected ${method} to ${safeTarget(answer.location, url)} (${status}); set the upstream's url to that address`
      : `the server answered ${status} (a redirect without a Location)`;
  }
  if (status === 401 || status === 403) {
    return `the server refused access (${code})${quote}; check the upstream's headers (credentials)`;
  }
  if (status === 405 && method === "POST")
    return `the server does not take POST at ${url.pathname} (405); ${SSE_ONLY}`;
  if (status === 404) {
    const sse = /\/sse\/?$/.test(url.pathname) ? `; ${SSE_ONLY}` : "";
    return `the server has no MCP endpoint at ${url.pathname} (404 Not Found)${sse}${sse ? "" : "; check the url"}`;
  }
  if (status >= 400) return `the server answered ${code}${quote}`;
  if (contentType === "text/html") {
    return `the server answered text/html, not MCP over Streamable HTTP; it may be a web page, or ${SSE_SERVER}`;
  }
  if (contentType === "text/event-stream") {
    return `the server answered with an event stream that is not MCP over Streamable HTTP; ${SSE_ONLY}`;
  }
  const type = contentType || "no content type";
  return `the server answered ${type}, not MCP over Streamable HTTP${quote}`;
}

/** What a refused (or non-MCP) answer stands for: the session is gone, or a one-line reason. */
export function refusalError(
  answer: Answer,
  method: "POST" | "GET",
  carriedSession: boolean,
  initialized: boolean,
  url: URL,
): Error {
  const gone = sessionGone(answer, carriedSession, carriedSession || initialized);
  if (gone !== undefined) return new SessionGoneError(answer.status, gone);
  return new UpstreamHttpError(answer.status, describeAnswer(answer, url, method));
}
