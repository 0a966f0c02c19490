/**
 * @module A Streamable HTTP client transport on undici that ties every message to the request whose POST
 * carried it: what an upstream sends on the answer stream of request X (a log line, a sampling, elicitation or
 * roots request, progress) reaches `onmessage` with `{ relatedRequestId: X }`, so the proxy can deliver it
 * only to the client whose call caused it. Messages of the standalone GET stream carry no tie.
 */
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, MessageExtraInfo } from "@modelcontextprotocol/sdk/types.js";
import type { Dispatcher } from "undici";
import { type ParamHeader, requestHeaders } from "../modern/headers.js";
import {
  type Answer,
  bodyMessage,
  EraRefusedError,
  goneInBand,
  mediaType,
  oneLine,
  refusalError,
  SessionGoneError,
  StreamBrokenError,
} from "./http-answer.js";
import { retriedAfterChallenge, scrubToken, sendAuthorized, type UpstreamAuth } from "./http-auth.js";
import { HttpExchange } from "./http-exchange.js";
import { StandaloneStream } from "./http-stream.js";
import { DEFAULT_MAX_LINE_BYTES } from "./lines.js";

/** The extra `onmessage` gets: the id of the request whose POST answer carried the message, if any. */
export type TiedMessageExtra = { relatedRequestId?: string | number };

export interface HttpTransportOptions {
  /** The keep-alive connection pool (an undici Agent); undici's global one if absent. */
  readonly dispatcher?: Dispatcher;
  /** The upstream's configured headers, then the instance's own (forwarded credentials). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Names the upstream in errors (never a credential). */
  readonly name?: string;
  /** Bound on one message (one SSE event or one JSON body); default 64 MiB. */
  readonly maxMessageBytes?: number;
  /** Same-origin 307/308 redirects followed per request (default 3); any other redirect is reported. */
  readonly maxRedirects?: number;
  /** First delay before the standalone GET stream is opened again after it ends (doubles to 30 s). */
  readonly reopenDelayMs?: number;
  /** How long close() waits for the DELETE that ends the session (default 2 s). */
  readonly closeTimeoutMs?: number;
  /** OAuth: its headers go on every request; a 401 (or 403 insufficient_scope) is answered through it. */
  readonly auth?: UpstreamAuth;
}

type Rpc = {
  id?: string | number | null;
  method?: string;
  params?: Record<string, unknown>;
  error?: unknown;
};

const isRequest = (m: Rpc): m is Rpc & { id: string | number; method: string } =>
  m.method !== undefined && m.id !== undefined && m.id !== null;

export class HttpClientTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  /** Mcp-Session-Id the server gave at initialize (stateful servers). */
  sessionId?: string;
  private protocolVersion: string | undefined;
  private initialized = false;
  private started = false;
  private closed = false;
  /** Abort controllers of the POSTs in flight, by the request ids they carry (to end a cancelled one). */
  private readonly inflight = new Set<AbortController>();
  private readonly byRequest = new Map<string | number, AbortController>();
  private readonly cancelled = new WeakSet<AbortController>();
  /** Pings sent to confirm that our session is gone (their ids). */
  private checks = 0;
  private readonly http: HttpExchange;
  private readonly stream: StandaloneStream;
  /** Set once the upstream is known to speak 2026-07-28 (see speakModern). */
  private modern: { version: string; headersOf: (tool: string) => readonly ParamHeader[] } | undefined;

  constructor(
    readonly url: URL,
    private readonly options: HttpTransportOptions = {},
  ) {
    this.http = new HttpExchange(url, options.dispatcher, options.maxRedirects ?? 3);
    this.stream = new StandaloneStream({
      http: this.http,
      headers: async () => ({
        ...this.headers({ accept: "text/event-stream" }),
        ...(await options.auth?.headers()),
      }),
      ...(options.auth ? { challenged: retriedAfterChallenge(options.auth) } : {}),
      maxMessageBytes: this.maxBytes,
      reopenDelayMs: options.reopenDelayMs ?? 1000,
      deliver: (data) => this.deliver(data, undefined),
      refused: (answer) => this.refusal(answer, "GET", this.sessionId !== undefined),
      error: (err) => this.onerror?.(err),
    });
  }

  private get maxBytes(): number {
    return this.options.maxMessageBytes ?? DEFAULT_MAX_LINE_BYTES;
  }

  private get who(): string {
    return `upstream ${this.options.name ?? this.url.host}`;
  }

  async start(): Promise<void> {
    if (this.started) throw new Error("HttpClientTransport already started");
    this.started = true;
  }

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  /**
   * Speaks 2026-07-28 from now on: no session (an `Mcp-Session-Id` answered is ignored), `MCP-Protocol-Version`,
   * `Mcp-Method`, `Mcp-Name` and a tools/call's `Mcp-Param-*` (from `headersOf(tool)`) on every POST, a
   * cancellation closes the request's stream instead of being posted, and a 4xx refusal that answers none of
   * our requests is taken for a 2025 server's (EraRefusedError).
   */
  speakModern(version: string, headersOf: (tool: string) => readonly ParamHeader[]): void {
    this.modern = { version, headersOf };
  }

  /** Headers of every request: configured ones first, then the protocol's (which win). */
  private headers(own: Record<string, string>, messages: readonly Rpc[] = []): Record<string, string> {
    const h: Record<string, string> = {};
    for (const [k, v] of Object.entries(this.options.headers ?? {})) h[k.toLowerCase()] = v;
    Object.assign(h, own);
    const modern = this.modern;
    if (modern) {
      const m = messages.length === 1 ? messages[0]! : { method: "" };
      const tool = m.method === "tools/call" ? String(m.params?.name) : undefined;
      const body = { method: m.method ?? "", ...(m.params ? { params: m.params } : {}) };
      Object.assign(h, requestHeaders(body, tool ? modern.headersOf(tool) : [], modern.version));
      if (!m.method) delete h["mcp-method"];
      return h;
    }
    if (this.sessionId) h["mcp-session-id"] = this.sessionId;
    if (this.protocolVersion) h["mcp-protocol-version"] = this.protocolVersion;
    return h;
  }

  async send(message: JSONRPCMessage | JSONRPCMessage[], _options?: TransportSendOptions): Promise<void> {
    if (this.closed) throw new Error("connection closed");
    const messages = (Array.isArray(message) ? message : [message]) as Rpc[];
    if (this.modern && messages.every((m) => m.method === "notifications/cancelled")) {
      // 2026-07-28 over HTTP: closing the request's stream is the cancellation (none is posted).
      for (const m of messages) this.cancel(m.params?.requestId as string | number);
      return;
    }
    const ids = messages.filter(isRequest).map((m) => m.id);
    const controller = new AbortController();
    this.inflight.add(controller);
    for (const id of ids) this.byRequest.set(id, controller);
    const carriedSession = this.sessionId !== undefined;
    let sent: Record<string, string> = {};
    try {
      const base = this.headers(
        { "content-type": "application/json", accept: "application/json, text/event-stream" },
        messages,
      );
      const post = (auth: Record<string, string>) => {
        sent = auth;
        return this.http.request("POST", { ...base, ...auth }, JSON.stringify(message), controller.signal);
      };
      const { auth } = this.options;
      const res = auth
        ? await sendAuthorized(auth, this.options.name ?? this.url.host, post)
        : await post({});
      const type = mediaType(res.headers["content-type"]);
      if (res.statusCode >= 300) {
        const answer = await this.http.answer(res);
        const refusal = { answer, error: this.refusal(answer, "POST", carriedSession) };
        // Unless the session is gone, a JSON-RPC error answering our request is the upstream's answer.
        if (!(refusal.error instanceof SessionGoneError) && this.deliverErrorFor(refusal.answer, ids)) return;
        const status = res.statusCode;
        if (this.modern && status >= 400 && status < 500 && ![401, 403, 413].includes(status))
          throw new EraRefusedError(status, bodyMessage(refusal.answer));
        throw refusal.error;
      }
      const sid = res.headers["mcp-session-id"];
      if (!this.modern && typeof sid === "string" && sid) this.sessionId = sid;
      if (res.statusCode === 202 || ids.length === 0) {
        await res.body.dump();
        if (messages.some((m) => m.method === "notifications/initialized")) {
          this.initialized = true;
          this.stream.open();
        }
        this.forgetCancelled(messages);
        return;
      }
      const tie = ids.length === 1 ? ids[0] : undefined;
      const unanswered = new Set(ids);
      const onData = (data: string) => {
        const got = this.deliver(data, tie);
        for (const m of got) if (m.method === undefined && m.id != null) unanswered.delete(m.id);
        return got.length;
      };
      if (type === "application/json") {
        const body = await this.http.text(res, this.maxBytes, this.who);
        const gone =
          carriedSession && tie !== undefined
            ? await this.goneBehind200(body, tie, controller.signal)
            : undefined;
        if (gone !== undefined) throw new SessionGoneError(res.statusCode, gone);
        // JSON that is no JSON-RPC at all: not an MCP endpoint (said in one line), not a broken answer.
        if (!onData(body))
          throw this.refusal({ status: res.statusCode, contentType: type, body }, "POST", false);
      } else if (type === "text/event-stream") {
        await this.http.events(res, this.maxBytes, this.who, onData, () => unanswered.size === 0);
      } else {
        throw this.refusal(await this.http.answer(res), "POST", carriedSession);
      }
      if (unanswered.size && !this.cancelled.has(controller)) {
        throw new StreamBrokenError(
          `${this.who}'s answer ended before the response to ${messages[0]?.method}`,
        );
      }
    } catch (err) {
      if (this.cancelled.has(controller)) return;
      if (this.closed) throw new Error("connection closed");
      throw scrubToken(err, sent);
    } finally {
      this.inflight.delete(controller);
      for (const id of ids) if (this.byRequest.get(id) === controller) this.byRequest.delete(id);
    }
  }

  /** After our cancellation of a request went out, its answer stream is of no use: end it. */
  private forgetCancelled(messages: readonly Rpc[]): void {
    for (const m of messages) {
      if (m.method === "notifications/cancelled") this.cancel(m.params?.requestId as string | number);
    }
  }

  /** Ends the answer stream of a request; its send() then returns quietly. */
  private cancel(id: string | number): void {
    const controller = this.byRequest.get(id);
    if (!controller) return;
    this.cancelled.add(controller);
    controller.abort();
  }

  /**
   * A 2xx JSON-RPC error saying our session is gone (SPEC §7.1) is taken for it only when certain: a `ping` on the
   * same session is refused the same way. Answered, the error was the upstream's real answer (it is delivered).
   * Returns the quoted detail when the session is gone.
   */
  private async goneBehind200(
    body: string,
    id: string | number,
    signal: AbortSignal,
  ): Promise<string | undefined> {
    if (this.modern || !this.initialized) return undefined;
    const said = goneInBand(body, id);
    if (said === undefined) return undefined;
    return (await this.pingRefused(signal)) ? said : undefined;
  }

  /**
   * True when a ping on our session is refused as "session gone"; false when it is answered, or anything else
   * happens (it fails, `signal` aborts: the request was cancelled or the transport closed, or 10 s pass).
   */
  private async pingRefused(signal: AbortSignal): Promise<boolean> {
    const ping = { jsonrpc: "2.0" as const, id: `toolpacks-session-check-${++this.checks}`, method: "ping" };
    try {
      const headers = {
        ...this.headers(
          { "content-type": "application/json", accept: "application/json, text/event-stream" },
          [ping],
        ),
        ...(await this.options.auth?.headers()),
      };
      const res = await this.http.request(
        "POST",
        headers,
        JSON.stringify(ping),
        AbortSignal.any([signal, AbortSignal.timeout(10_000)]),
      );
      if (res.statusCode >= 300) {
        const answer = await this.http.answer(res);
        return this.refusal(answer, "POST", true) instanceof SessionGoneError;
      }
      // "gone": refused in band the same way; "answered": any other answer to the ping (an error too).
      let verdict: "gone" | "answered" | undefined;
      const read = (data: string) => {
        if (verdict) return;
        if (goneInBand(data, ping.id) !== undefined) verdict = "gone";
        else {
          try {
            if ((JSON.parse(data) as { id?: unknown } | null)?.id === ping.id) verdict = "answered";
          } catch {}
        }
      };
      if (mediaType(res.headers["content-type"]) === "text/event-stream")
        await this.http.events(res, this.maxBytes, this.who, read, () => verdict !== undefined);
      else read(await this.http.text(res, this.maxBytes, this.who));
      res.body.destroy();
      return verdict === "gone";
    } catch {
      return false;
    }
  }

  private refusal(answer: Answer, method: "POST" | "GET", carriedSession: boolean): Error {
    return refusalError(answer, method, carriedSession, this.initialized, this.url);
  }

  private deliverErrorFor(answer: Answer, ids: readonly (string | number)[]): boolean {
    if (!ids.length) return false;
    let m: Rpc;
    try {
      m = JSON.parse(answer.body) as Rpc;
    } catch {
      return false;
    }
    if (!m || typeof m !== "object" || !m.error || m.id == null || !ids.includes(m.id)) return false;
    this.deliver(answer.body, m.id);
    return true;
  }

  /** Parses one JSON body or SSE data (a message or a batch) and hands each message on; returns them. */
  private deliver(data: string, tie: string | number | undefined): Rpc[] {
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      this.onerror?.(new Error(`${this.who} sent something that is not JSON: ${oneLine(data)}`));
      return [];
    }
    const list = (Array.isArray(parsed) ? parsed : [parsed]) as Rpc[];
    const extra: (MessageExtraInfo & TiedMessageExtra) | undefined =
      tie === undefined ? undefined : { relatedRequestId: tie };
    const good: Rpc[] = [];
    for (const m of list) {
      if (!m || typeof m !== "object" || (m as { jsonrpc?: unknown }).jsonrpc !== "2.0") {
        this.onerror?.(
          new Error(`${this.who} sent something that is not JSON-RPC 2.0: ${oneLine(JSON.stringify(m))}`),
        );
        continue;
      }
      good.push(m);
      this.onmessage?.(m as JSONRPCMessage, extra);
    }
    return good;
  }

  /** Aborts every request in flight, ends the session with DELETE (405 or failure: fine), then onclose. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stream.close();
    for (const c of this.inflight) c.abort();
    this.inflight.clear();
    this.byRequest.clear();
    if (this.sessionId) {
      const signal = AbortSignal.timeout(this.options.closeTimeoutMs ?? 2000);
      const auth = await this.options.auth?.headers().catch(() => ({}));
      await this.http
        .request("DELETE", { ...this.headers({}), ...auth }, undefined, signal)
        .then((res) => res.body.dump())
        .catch(() => {});
    }
    this.onclose?.();
  }
}
