/**
 * @module Forwarded requests on one upstream connection, below its client (rpc-client.ts): written on the
 * transport with ids of the proxy's own (`tp:N`; the client's ids are numbers) and answered straight off it. What the upstream sends on a call's own response
 * stream (progress for our token, log lines, server→client requests) is handed to that call: it is tied to
 * the client that caused it. Everything else goes on to the connection's client, untied.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Implementation } from "../modern/meta.js";
import type { LogLevel } from "../modern/wire.js";
import { ErrorCode, McpError } from "../protocol.js";

type Params = Record<string, unknown>;
export type ServerRequest = { method: string; params?: Params };

/**
 * The per-request envelope a 2026-07-28 upstream is sent for this call (the downstream client's, when a bridge
 * forwards it verbatim); without one, toolpacks' own. A 2025 upstream ignores it.
 */
export interface RequestEnvelope {
  readonly clientCapabilities: Readonly<Record<string, unknown>>;
  /** Absent: toolpacks' own client info. */
  readonly clientInfo?: Implementation;
  /** Absent: no log lines for this request (the upstream must send none). */
  readonly logLevel?: LogLevel;
}

export interface ForwardOptions {
  readonly signal?: AbortSignal;
  /** Fails the call (and cancels it upstream) after this long without a result or progress. */
  readonly timeoutMs?: number;
  /** Progress of this call, delivered synchronously in arrival order (the last one included). */
  readonly onProgress?: (params: Params) => void;
  /** A notification the upstream sent on this call's own response stream (a log line, say). */
  readonly onNotification?: (notification: { method: string; params?: Params }) => void;
  /** A server→client request the upstream sent on this call's own response stream. */
  readonly onServerRequest?: (request: ServerRequest, signal: AbortSignal) => Promise<Params>;
  /** 2026-07-28 upstreams: the envelope of this request (see RequestEnvelope). */
  readonly envelope?: RequestEnvelope;
}

interface Pending {
  resolve(r: Params): void;
  reject(e: unknown): void;
  readonly options: ForwardOptions;
}

type Incoming = {
  id?: unknown;
  method?: string;
  params?: Params;
  result?: Params;
  error?: { code: number; message: string; data?: unknown };
};

export class Forwarder {
  private seq = 0;
  private progressSeq = 0;
  private readonly pending = new Map<string, Pending>();
  private readonly progress = new Map<string, (params: Params) => void>();
  /** Tied server→client requests being answered, by the upstream's id: its cancellation aborts them. */
  private readonly answering = new Map<unknown, AbortController>();

  /** Takes our answers, progress and tied messages off the transport before the client sees the rest. */
  attach(transport: Transport): void {
    const client = transport.onmessage;
    transport.onmessage = (message, extra) => {
      const m = message as Incoming;
      if (m.method === "notifications/cancelled") {
        const mine = this.answering.get(m.params?.requestId);
        if (mine) {
          mine.abort(m.params?.reason ?? "cancelled");
          return;
        }
      }
      if (typeof m.id === "string" && !m.method) {
        const p = this.pending.get(m.id);
        if (p) {
          this.pending.delete(m.id);
          if (m.error) p.reject(McpError.fromError(m.error.code, m.error.message, m.error.data));
          else p.resolve(m.result ?? {});
          return;
        }
      }
      if (m.method === "notifications/progress") {
        const handler = this.progress.get(String(m.params?.progressToken));
        if (handler) {
          const { progressToken: _t, ...rest } = m.params ?? {};
          handler(rest);
          return;
        }
      }
      const tie = (extra as { relatedRequestId?: unknown } | undefined)?.relatedRequestId;
      const call = typeof tie === "string" ? this.pending.get(tie) : undefined;
      if (call && m.method && this.tied(transport, call.options, m)) return;
      client?.(message, extra);
    };
  }

  /** Hands a message tied to a call to that call; false when the call takes no such message. */
  private tied(transport: Transport, options: ForwardOptions, m: Incoming): boolean {
    const message = { method: m.method!, ...(m.params ? { params: m.params } : {}) };
    if (m.id === undefined) {
      if (!options.onNotification) return false;
      options.onNotification(message);
      return true;
    }
    const handler = options.onServerRequest;
    if (!handler) return false;
    const id = m.id;
    const controller = new AbortController();
    this.answering.set(id, controller);
    const reply = (body: object) =>
      void transport.send({ jsonrpc: "2.0", id, ...body } as JSONRPCMessage).catch(() => {});
    handler(message, controller.signal)
      .then(
        (result) => {
          if (!controller.signal.aborted) reply({ result });
        },
        (err: { code?: unknown; message?: string; data?: unknown }) => {
          if (controller.signal.aborted) return;
          const code = Number.isSafeInteger(err?.code) ? (err.code as number) : ErrorCode.InternalError;
          const data = err?.data !== undefined ? { data: err.data } : {};
          reply({ error: { code, message: err?.message ?? "Internal error", ...data } });
        },
      )
      .finally(() => this.answering.delete(id));
    return true;
  }

  /** Fails every request in flight (the connection closed). */
  failAll(err: unknown): void {
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) p.reject(err);
    for (const c of this.answering.values()) c.abort(err);
    this.answering.clear();
  }

  async request(
    transport: Transport,
    method: string,
    params: Params,
    options: ForwardOptions & { timeoutMs: number; id?: string },
  ): Promise<Params> {
    const id = options.id ?? `tp:${++this.seq}`;
    const { timeoutMs } = options;
    let timer: NodeJS.Timeout | undefined;
    let token: string | undefined;
    const answered = new Promise<Params>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, options });
    });
    // It may be settled (timeout, cancel, closed connection) before anyone awaits it: never an unhandled rejection.
    answered.catch(() => {});
    const settle = (err: unknown) => {
      const p = this.pending.get(id);
      if (!p) return;
      this.pending.delete(id);
      void transport
        .send({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: id, reason: String((err as Error)?.message ?? err) },
        })
        .catch(() => {});
      p.reject(err);
    };
    const abort = () => settle(options.signal?.reason ?? new McpError(ErrorCode.RequestTimeout, "cancelled"));
    const arm = () => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => {
        settle(
          new McpError(ErrorCode.RequestTimeout, `timed out after ${timeoutMs} ms`, { timeout: timeoutMs }),
        );
      }, timeoutMs);
    };
    let sent = params;
    if (options.onProgress) {
      token = `tp-${++this.progressSeq}`;
      const onProgress = options.onProgress;
      this.progress.set(token, (p) => {
        arm();
        onProgress(p);
      });
      sent = { ...params, _meta: { ...(params._meta as object | undefined), progressToken: token } };
    }
    try {
      options.signal?.addEventListener("abort", abort, { once: true });
      // Cancelled while the upstream was (re)starting: the listener above came too late to hear it.
      if (options.signal?.aborted) throw options.signal.reason ?? new Error("cancelled");
      arm();
      // Not awaited: an HTTP upstream's send lasts until its answer, a full pipe until it drains; the timeout and
      // cancellation must be able to settle the call meanwhile. A failed send fails the call.
      transport.send({ jsonrpc: "2.0", id, method, params: sent } as JSONRPCMessage).catch((err) => {
        const p = this.pending.get(id);
        if (!p) return;
        this.pending.delete(id);
        p.reject(err);
      });
      return await answered;
    } finally {
      this.pending.delete(id);
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", abort);
      if (token) this.progress.delete(token);
    }
  }
}
