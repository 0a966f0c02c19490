/**
 * @module The HTTP edge without a socket: a Web `Request` in, a `Response` out (as hono's `app.request` and
 * fastify's `inject`), through the very handler a node:http server runs. The handler is written on node:http's
 * request and response; here they are played by two small objects with the parts of them it uses, so tests and
 * embedders (a fetch-style server, a worker) drive the real edge in process. SSE answers stream.
 */
import { EventEmitter } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";

/** A node:http-style handler: true when it answered, false when the path is not its. */
export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

export interface WebRequestInfo {
  /** The peer address the request is taken to come from (per-client limits count it); default 127.0.0.1. */
  readonly address?: string;
}

/** Answers `request` with `handler`; a path the handler does not serve is 404. */
export async function webRequest(
  handler: NodeHandler,
  request: Request,
  info: WebRequestInfo = {},
): Promise<Response> {
  const url = new URL(request.url);
  const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
  const req = incoming(request, url, body, info.address ?? "127.0.0.1");
  const res = new WebResponse();
  // The client going away is the request's stream being cancelled: the same as a socket closing.
  request.signal?.addEventListener("abort", () => res.destroy(), { once: true });
  // The handler may answer after it returns (a session's transport writes when the upstream answers).
  void handler(req, res as unknown as ServerResponse).then(
    (ours) => {
      if (!ours && !res.headersSent)
        res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}');
    },
    (err: unknown) => res.fail(err),
  );
  return res.response;
}

/** The request as node:http gives it to a handler: a readable body, lower-case headers, a peer address. */
function incoming(request: Request, url: URL, body: Buffer | undefined, address: string): IncomingMessage {
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    headers[name.toLowerCase()] = value;
  });
  if (!headers.host) headers.host = url.host;
  if (body && headers["content-length"] === undefined) headers["content-length"] = String(body.length);
  const stream = Readable.from(body ? [body] : [], { objectMode: false });
  return Object.assign(stream, {
    method: request.method,
    url: `${url.pathname}${url.search}`,
    headers,
    socket: { remoteAddress: address },
  }) as unknown as IncomingMessage;
}

/**
 * The response side: `writeHead` settles the `Response` (its body streams what is written after), `writableLength`
 * is what the reader has not taken yet (the output bounds read it), `drain` when it takes more, `close` when the
 * reader cancels or the response is over.
 */
class WebResponse extends EventEmitter {
  statusCode = 200;
  headersSent = false;
  writableEnded = false;
  destroyed = false;
  private readonly headers = new Headers();
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private queued = 0;
  private settle!: (r: Response) => void;
  private reject!: (err: unknown) => void;
  readonly response = new Promise<Response>((ok, fail) => {
    this.settle = ok;
    this.reject = fail;
  });
  private readonly body: ReadableStream<Uint8Array> = new ReadableStream<Uint8Array>({
    start: (controller) => {
      this.controller = controller;
    },
    pull: () => {
      this.queued = 0;
      this.emit("drain");
    },
    cancel: () => {
      this.destroy();
    },
  });

  get writableLength(): number {
    return this.queued;
  }

  setHeader(name: string, value: string | number | readonly string[]): this {
    this.headers.set(name, Array.isArray(value) ? value.join(", ") : String(value));
    return this;
  }

  writeHead(status: number, headers: Record<string, string | number | readonly string[]> = {}): this {
    if (this.headersSent) return this;
    this.statusCode = status;
    for (const [name, value] of Object.entries(headers)) this.setHeader(name, value as string);
    this.headersSent = true;
    // A status without a body (1xx, 204, 304) cannot carry a stream.
    const empty = status === 204 || status === 304 || status < 200;
    this.settle(new Response(empty ? null : this.body, { status, headers: this.headers }));
    return this;
  }

  flushHeaders(): void {
    if (!this.headersSent) this.writeHead(this.statusCode);
  }

  write(chunk: string | Uint8Array): boolean {
    if (this.destroyed || this.writableEnded) return false;
    if (!this.headersSent) this.writeHead(this.statusCode);
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    this.queued += bytes.length;
    this.controller.enqueue(bytes);
    return true;
  }

  end(chunk?: string | Uint8Array): this {
    if (this.writableEnded || this.destroyed) return this;
    if (chunk !== undefined) this.write(chunk);
    if (!this.headersSent) this.writeHead(this.statusCode);
    this.writableEnded = true;
    try {
      this.controller.close();
    } catch {}
    this.emit("finish");
    queueMicrotask(() => this.emit("close"));
    return this;
  }

  destroy(): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    try {
      this.controller.error(new Error("the response was closed"));
    } catch {}
    if (!this.headersSent) this.reject(new Error("the response was closed before its headers"));
    this.emit("close");
    return this;
  }

  /** The handler threw before answering: a 500 (it answers its own errors, so this is a bug of ours). */
  fail(err: unknown): void {
    if (this.headersSent) return void this.destroy();
    this.writeHead(500, { "content-type": "application/json" }).end(
      JSON.stringify({ error: (err as Error)?.message ?? "Internal error" }),
    );
  }
}
