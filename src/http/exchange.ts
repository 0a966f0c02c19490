/**
 * @module One 2026-07-28 request over HTTP: its answer as plain JSON, or an SSE stream when something must
 * reach the client first (progress, its log lines, a listen stream's notifications). The client closing the
 * response is the cancellation of the request.
 */
import type { ServerResponse } from "node:http";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { Reply } from "../proxy/transport.js";
import { modernStatusOf } from "../wire/errors.js";
import { Cancellation } from "../wire/signal.js";
import { OutputGuard } from "./output-guard.js";
import type { TransportOptions } from "./session-transport.js";

const SSE_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-accel-buffering": "no",
};

export class Exchange implements Reply {
  /** Aborted when the client closes the request: its cancellation. */
  readonly cancellation = new Cancellation();
  private streaming = false;
  private done = false;
  /** Bounds what waits to be written once the answer is a stream (SPEC §7.6). */
  private guard: OutputGuard | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly id: RequestId,
    /** Bounds on unsent output (limits.pending_output_bytes, stalled_reader_timeout); none: unbounded. */
    private readonly bounds?: TransportOptions,
  ) {
    res.on("close", () => {
      if (!this.done) this.cancellation.abort(new Error("the client closed the request"));
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const res = this.res;
    if (this.done || res.destroyed) return;
    const m = message as { id?: RequestId; method?: string; error?: { code: number } };
    if (m.method === undefined && m.id === this.id) {
      this.done = true;
      if (this.streaming) {
        if (this.guard) {
          this.guard.event(message);
          this.guard.end();
        } else res.end(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
        return;
      }
      const body = JSON.stringify(message);
      res.writeHead(m.error ? modernStatusOf(m.error.code) : 200, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
      });
      res.end(body);
      const output = this.bounds?.output;
      if (output) OutputGuard.afterEnd(res, output, this.bounds?.outputEvents);
      return;
    }
    if (!this.streaming) {
      this.streaming = true;
      res.writeHead(200, SSE_HEADERS);
      const output = this.bounds?.output;
      if (output) this.guard = new OutputGuard(res, output, this.bounds?.outputEvents);
    }
    if (this.guard) this.guard.event(message);
    else res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  abandon(): void {
    if (this.done) return;
    this.done = true;
    if (!this.res.headersSent) this.res.writeHead(202);
    this.res.end();
  }
}
