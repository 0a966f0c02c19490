/**
 * @module One 2026-07-28 request over HTTP: its answer as plain JSON, or an SSE stream when something must
 * reach the client first (progress, its log lines, a listen stream's notifications). The client closing the
 * response is the cancellation of the request.
 */
import type { ServerResponse } from "node:http";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { Reply } from "../proxy/modern.js";

const SSE_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-accel-buffering": "no",
};

/** The HTTP status of an error answer that is not streamed (streamable-http §Status codes). */
export function statusOf(code: number): number {
  if (code === -32601) return 404;
  if (code === -32020 || code === -32021 || code === -32022) return 400;
  return 200;
}

export class Exchange implements Reply {
  readonly controller = new AbortController();
  private streaming = false;
  private done = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly id: RequestId,
  ) {
    res.on("close", () => {
      if (!this.done) this.controller.abort(new Error("the client closed the request"));
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const res = this.res;
    if (this.done || res.destroyed) return;
    const m = message as { id?: RequestId; method?: string; error?: { code: number } };
    if (m.method === undefined && m.id === this.id) {
      this.done = true;
      if (this.streaming) {
        res.end(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
        return;
      }
      const body = JSON.stringify(message);
      res.writeHead(m.error ? statusOf(m.error.code) : 200, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
      });
      res.end(body);
      return;
    }
    if (!this.streaming) {
      this.streaming = true;
      res.writeHead(200, SSE_HEADERS);
    }
    res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  abandon(): void {
    if (this.done) return;
    this.done = true;
    if (!this.res.headersSent) this.res.writeHead(202);
    this.res.end();
  }
}
