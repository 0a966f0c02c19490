/**
 * @module Requests a session sends to its client (sampling, elicitation, roots forwarded from upstreams): ids
 * of the session's own, starting at 1 (SDK clients ignore a cancellation of request id 0), matched with the
 * client's answers, cancelled when the upstream cancels, failed when the time runs out or the session closes.
 */
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";
import { rpcError } from "./errors.js";
import type { Params } from "./host.js";

const TIMEOUT_MS = 10 * 60_000;
/** Requests one session may have waiting for its client's answer; more are refused to the upstream at once. */
export const MAX_WAITING = 100;

type Send = (message: JSONRPCMessage, relatedRequestId?: RequestId) => Promise<void>;

interface Waiting {
  resolve(result: Params): void;
  reject(err: Error): void;
}

export class Outbound {
  private seq = 0;
  private readonly waiting = new Map<number, Waiting>();

  constructor(private readonly send: Send) {}

  /** Asks the client; the answer's error keeps the client's code, message and data. */
  request(
    request: { method: string; params?: Params },
    signal: AbortSignal,
    relatedRequestId?: RequestId,
    timeoutMs = TIMEOUT_MS,
  ): Promise<Params> {
    if (this.waiting.size >= MAX_WAITING) {
      const message = `the client already has ${MAX_WAITING} requests of this session waiting for its answer; ${request.method} is refused`;
      return Promise.reject(rpcError(-32603, message));
    }
    const id = ++this.seq;
    return new Promise<Params>((resolve, reject) => {
      const cancel = (reason: unknown) => {
        if (!this.waiting.delete(id)) return;
        clearTimeout(timer);
        void this.send(
          {
            jsonrpc: "2.0",
            method: "notifications/cancelled",
            params: { requestId: id, reason: String(reason) },
          },
          relatedRequestId,
        ).catch(() => {});
        reject(rpcError(-32001, `the client did not answer ${request.method}: ${String(reason)}`));
      };
      const onAbort = () => cancel(signal.reason ?? "cancelled");
      const timer = setTimeout(() => cancel(`timed out after ${timeoutMs} ms`), timeoutMs);
      timer.unref();
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
      };
      this.waiting.set(id, {
        resolve: (r) => {
          done();
          resolve(r);
        },
        reject: (e) => {
          done();
          reject(e);
        },
      });
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      const message = {
        jsonrpc: "2.0",
        id,
        method: request.method,
        ...(request.params ? { params: request.params } : {}),
      };
      this.send(message as JSONRPCMessage, relatedRequestId).catch((err: Error) => {
        const w = this.waiting.get(id);
        if (!w) return;
        this.waiting.delete(id);
        w.reject(rpcError(-32603, err.message));
      });
    });
  }

  /** The client's answer to one of our requests; false when it answers nothing we asked. */
  settle(message: {
    id: RequestId;
    result?: Params;
    error?: { code: number; message: string; data?: unknown };
  }): boolean {
    if (typeof message.id !== "number") return false;
    const w = this.waiting.get(message.id);
    if (!w) return false;
    this.waiting.delete(message.id);
    if (message.error) w.reject(rpcError(message.error.code, message.error.message, message.error.data));
    else w.resolve(message.result ?? {});
    return true;
  }

  /** The session closed: nothing will answer. */
  failAll(reason: string): void {
    const all = [...this.waiting.values()];
    this.waiting.clear();
    for (const w of all) w.reject(rpcError(-32000, reason));
  }
}
