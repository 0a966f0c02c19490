/** @module The Streamable HTTP transport of one session, on plain node:http (no Web Request/Response conversion). */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, MessageExtraInfo, RequestId } from "@modelcontextprotocol/sdk/types.js";
import { errors, type WireError } from "../wire/errors.js";
import { SENT } from "../wire/peer.js";
import { type OutputEvents, OutputGuard, type OutputLimits } from "./output-guard.js";
import { sendError } from "./replies.js";

/** One POST that carried requests: answered as plain JSON unless something must be streamed before the answer. */
interface PendingPost {
  readonly res: ServerResponse;
  readonly waiting: Set<RequestId>;
  readonly responses: JSONRPCMessage[];
  readonly batch: boolean;
  sse: boolean;
  done: boolean;
  /** Bounds what waits to be written once the answer is a stream. */
  guard?: OutputGuard;
}

export interface TransportOptions {
  /** Bounds on unsent output per response, and what to say when a client falls behind (default: none). */
  readonly output?: OutputLimits;
  readonly outputEvents?: OutputEvents;
}

const UNBOUNDED: OutputLimits = { pendingBytes: Number.POSITIVE_INFINITY, stalledMs: 2_000_000_000 };

const JSON_TYPE = { "content-type": "application/json" };

const SSE_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
};

export class HttpSessionTransport implements Transport {
  /** Read by tracing (`network.transport`). */
  readonly kind = "http";
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  private readonly pending = new Map<RequestId, PendingPost>();
  private stream: ServerResponse | undefined;
  private streamGuard: OutputGuard | undefined;
  private closed = false;

  /**
   * `announce`: send the Mcp-Session-Id header (not in stateless mode, where there is no session to name).
   * `admit(n)`: the door's bound on requests in flight; a POST past it is refused whole (429).
   */
  constructor(
    readonly sessionId: string,
    private readonly announce = true,
    private readonly options: TransportOptions = {},
    private readonly admit?: (n: number) => WireError | undefined,
  ) {}

  private guard(res: ServerResponse): OutputGuard {
    return new OutputGuard(res, this.options.output ?? UNBOUNDED, this.options.outputEvents);
  }

  private headers(extra: Record<string, string>): Record<string, string> {
    return this.announce ? { ...extra, "mcp-session-id": this.sessionId } : extra;
  }

  async start(): Promise<void> {}

  /** True while a GET stream is open (the session is in use even when it sends nothing). */
  get holding(): boolean {
    return this.stream !== undefined;
  }

  handlePost(req: IncomingMessage, res: ServerResponse, messages: JSONRPCMessage[], batch: boolean): void {
    const requestInfo = { headers: req.headers };
    const ids: RequestId[] = [];
    for (const m of messages) if ("method" in m && "id" in m) ids.push(m.id);
    if (ids.length === 0) {
      res.writeHead(202, this.headers({})).end();
      for (const m of messages) this.onmessage?.(m, { requestInfo });
      return;
    }
    const busy = this.admit?.(ids.length);
    if (busy) {
      sendError(res, busy, null, this.headers({}));
      return;
    }
    const taken = ids.find((id) => this.pending.has(id));
    if (taken !== undefined) {
      sendError(res, errors.requestIdInUse(taken), null, this.headers({}));
      return;
    }
    const post: PendingPost = { res, waiting: new Set(ids), responses: [], batch, sse: false, done: false };
    for (const id of ids) this.pending.set(id, post);
    res.on("close", () => {
      if (post.done) return;
      post.done = true;
      // A dropped connection is not a cancellation: the answers are simply not delivered.
      for (const id of post.waiting) if (this.pending.get(id) === post) this.pending.delete(id);
    });
    for (const m of messages) this.onmessage?.(m, { requestInfo });
  }

  /** A request that gets no answer (the client cancelled it): its POST ends once nothing else waits on it. */
  abandon(id: RequestId): void {
    const post = this.pending.get(id);
    if (!post) return;
    this.pending.delete(id);
    post.waiting.delete(id);
    if (post.waiting.size > 0 || post.done) return;
    post.done = true;
    if (post.sse) {
      post.guard?.end();
      return;
    }
    if (post.responses.length) {
      this.answerNow(post);
      return;
    }
    if (!post.res.headersSent) post.res.writeHead(202, this.headers({}));
    post.res.end();
  }

  handleGet(res: ServerResponse): void {
    if (this.stream) {
      sendError(res, errors.streamOpen());
      return;
    }
    res.writeHead(200, this.headers(SSE_HEADERS));
    res.flushHeaders();
    this.stream = res;
    this.streamGuard = this.guard(res);
    res.on("close", () => {
      if (this.stream !== res) return;
      this.stream = undefined;
      this.streamGuard = undefined;
    });
  }

  /** Writes at once (nothing to wait for: what a slow reader leaves unsent is bounded by its guard). */
  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (this.closed) return SENT;
    const isResponse = ("result" in message || "error" in message) && "id" in message;
    if (isResponse) {
      const id = (message as { id: RequestId }).id;
      const post = this.pending.get(id);
      if (!post) return SENT;
      this.pending.delete(id);
      post.waiting.delete(id);
      this.answer(post, message);
      return SENT;
    }
    const related = options?.relatedRequestId;
    const post = related !== undefined ? this.pending.get(related) : undefined;
    if (post && !post.done) {
      this.upgrade(post);
      post.guard!.event(message);
      return SENT;
    }
    // Not tied to a live request: the standalone GET stream. A notification with nowhere to go is dropped (as the
    // SDK does); a request fails at once rather than waiting for an answer that cannot come.
    if (this.streamGuard) this.streamGuard.event(message);
    else if ("id" in message && "method" in message) {
      return Promise.reject(
        new Error(`the client has no open stream to receive ${(message as { method: string }).method}`),
      );
    }
    return SENT;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // A request still waiting gets an error, not a silent end: the client would wait for its own timeout.
    for (const post of new Set(this.pending.values())) {
      for (const id of [...post.waiting]) {
        post.waiting.delete(id);
        this.answer(post, { jsonrpc: "2.0", id, error: errors.sessionClosed().body } as JSONRPCMessage);
      }
      if (!post.done) {
        post.done = true;
        if (!post.res.headersSent) post.res.writeHead(204);
        post.res.end();
      }
    }
    this.pending.clear();
    this.streamGuard?.end();
    this.stream = undefined;
    this.streamGuard = undefined;
    this.onclose?.();
  }

  private upgrade(post: PendingPost): void {
    if (post.sse) return;
    post.sse = true;
    post.res.writeHead(200, this.headers(SSE_HEADERS));
    post.guard = this.guard(post.res);
    // Answers of a batch that came before the switch go out first.
    for (const answered of post.responses) post.guard.event(answered);
    post.responses.length = 0;
  }

  private answer(post: PendingPost, message: JSONRPCMessage): void {
    if (post.done) return;
    if (post.sse) {
      post.guard!.event(message);
      if (post.waiting.size === 0) {
        post.done = true;
        post.guard!.end();
      }
      return;
    }
    post.responses.push(message);
    if (post.waiting.size > 0) return;
    post.done = true;
    this.answerNow(post);
  }

  private answerNow(post: PendingPost): void {
    const body = JSON.stringify(post.batch ? post.responses : post.responses[0]);
    post.res.writeHead(
      200,
      this.announce ? { "content-type": "application/json", "mcp-session-id": this.sessionId } : JSON_TYPE,
    );
    post.res.end(body);
    if (this.options.output) OutputGuard.afterEnd(post.res, this.options.output, this.options.outputEvents);
  }
}
