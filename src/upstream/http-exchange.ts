/**
 * @module One HTTP exchange with an upstream on undici: the request (same-origin 307/308 redirects followed),
 * and its body read as bounded JSON text, as SSE events, or in part as the reason of a refusal.
 */
import { type Dispatcher, request } from "undici";
import { type Answer, mediaType, StreamBrokenError, UpstreamUnreachableError } from "./http-answer.js";
import { LineTooLongError } from "./lines.js";
import { SseReader } from "./sse.js";

export type Response = Dispatcher.ResponseData;

/** How much of a refusal's body is read for its reason. */
const ANSWER_BYTES = 8192;
/** How long an answer stream is still read after the last response it owed arrived (then it is dropped). */
const LINGER_MS = 5000;

export class HttpExchange {
  constructor(
    private readonly url: URL,
    private readonly dispatcher: Dispatcher | undefined,
    private readonly maxRedirects: number,
  ) {}

  async request(
    method: "POST" | "GET" | "DELETE",
    headers: Record<string, string>,
    body: string | undefined,
    signal: AbortSignal,
    url = this.url,
  ): Promise<Response> {
    for (let hop = 0; ; hop++) {
      let res: Response;
      try {
        res = await request(url, {
          method,
          headers,
          ...(body !== undefined ? { body } : {}),
          signal,
          ...(this.dispatcher ? { dispatcher: this.dispatcher } : {}),
        });
      } catch (err) {
        if (signal.aborted) throw err;
        throw new UpstreamUnreachableError(err);
      }
      const location = res.headers.location;
      if ((res.statusCode !== 307 && res.statusCode !== 308) || typeof location !== "string") return res;
      const next = new URL(location, url);
      // Only within the origin: the headers (credentials) must not go anywhere else.
      if (next.origin !== this.url.origin || hop >= this.maxRedirects) return res;
      await res.body.dump();
      url = next;
    }
  }

  async answer(res: Response): Promise<Answer> {
    const parts: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body) {
        parts.push(chunk as Buffer);
        size += (chunk as Buffer).length;
        if (size >= ANSWER_BYTES) break;
      }
    } catch {}
    res.body.destroy();
    const location = res.headers.location;
    return {
      status: res.statusCode,
      contentType: mediaType(res.headers["content-type"]),
      body: Buffer.concat(parts).subarray(0, ANSWER_BYTES).toString("utf8"),
      location: typeof location === "string" ? location : undefined,
    };
  }

  async text(res: Response, max: number, who: string): Promise<string> {
    const parts: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > max) {
          res.body.destroy();
          throw new LineTooLongError(max, who);
        }
        parts.push(chunk as Buffer);
      }
    } catch (err) {
      if (err instanceof LineTooLongError) throw err;
      throw new StreamBrokenError(`${who}'s answer broke off: ${(err as Error).message}`, { cause: err });
    }
    return Buffer.concat(parts, size).toString("utf8");
  }

  /**
   * Reads SSE events, calling `onData` with each message event's data, until the stream ends; resolves early
   * (reading on for a while) once `done()` says every answer owed has come; `ended` is called at the very end.
   */
  events(
    res: Response,
    max: number,
    who: string,
    onData: (data: string) => void,
    done: () => boolean,
    ended?: () => void,
    onId?: (id: string) => void,
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      let linger: NodeJS.Timeout | undefined;
      const settle = (err?: Error) => {
        if (settled) return;
        settled = true;
        if (err) reject(err);
        else resolve();
      };
      const check = () => {
        if (settled || !done()) return;
        settle();
        linger = setTimeout(() => res.body.destroy(), LINGER_MS);
        linger.unref();
      };
      let overflow = false;
      const reader = new SseReader(
        max,
        (event) => {
          if (event.id !== undefined) onId?.(event.id);
          if (event.event !== "message") return;
          onData(event.data);
          check();
        },
        () => {
          overflow = true;
          res.body.destroy();
        },
      );
      check();
      res.body.on("data", (chunk: Buffer) => reader.push(chunk));
      res.body.once("error", (err) => {
        if (overflow) settle(new LineTooLongError(max, who));
        else
          settle(new StreamBrokenError(`${who}'s answer stream broke off: ${err.message}`, { cause: err }));
      });
      res.body.once("close", () => {
        clearTimeout(linger);
        reader.stop();
        settle(overflow ? new LineTooLongError(max, who) : undefined);
        ended?.();
      });
    });
  }
}
