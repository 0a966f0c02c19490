/**
 * @module The standalone GET stream of a Streamable HTTP session: server-initiated messages tied to no request.
 * Opened after initialize; a 405 means the server has none (fine); when it ends or breaks it is opened again,
 * resuming after the last event id, with a doubling delay; a refusal (session gone, not MCP) ends it for good.
 */
import type { Answer } from "./http-answer.js";
import { mediaType } from "./http-answer.js";
import type { HttpExchange, Response } from "./http-exchange.js";

const MAX_DELAY_MS = 30_000;

export interface StreamOptions {
  readonly http: HttpExchange;
  readonly headers: () => Promise<Record<string, string>>;
  /** A refusal with an OAuth challenge: true when the stream may be opened again (new credentials). */
  readonly challenged?: (res: Response, sent: Readonly<Record<string, string>>) => Promise<boolean>;
  readonly maxMessageBytes: number;
  readonly reopenDelayMs: number;
  readonly deliver: (data: string) => void;
  /** The error a refusal of the GET stands for (SessionGoneError, UpstreamHttpError). */
  readonly refused: (answer: Answer) => Error;
  readonly error: (err: Error) => void;
}

export class StandaloneStream {
  private controller: AbortController | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastEventId: string | undefined;
  private failures = 0;
  private stopped = false;

  constructor(private readonly options: StreamOptions) {}

  open(): void {
    if (this.stopped || this.controller) return;
    const controller = new AbortController();
    this.controller = controller;
    void this.run(controller).then(
      (again) => this.ended(controller, again),
      (err: Error) => {
        if (!controller.signal.aborted) this.options.error(err);
        this.ended(controller, true);
      },
    );
  }

  /** Resolves true when the stream should be opened again. */
  private async run(controller: AbortController): Promise<boolean> {
    const { http, maxMessageBytes } = this.options;
    const headers = await this.options.headers();
    if (this.lastEventId !== undefined) headers["last-event-id"] = this.lastEventId;
    const res = await http.request("GET", headers, undefined, controller.signal);
    if (res.statusCode === 405) {
      await res.body.dump();
      return false;
    }
    if ((res.statusCode === 401 || res.statusCode === 403) && this.options.challenged) {
      const again = await this.options.challenged(res, headers);
      if (again) {
        await res.body.dump();
        return true;
      }
    }
    if (res.statusCode >= 300 || mediaType(res.headers["content-type"]) !== "text/event-stream") {
      const answer = await http.answer(res);
      this.options.error(this.options.refused(answer));
      return false;
    }
    this.failures = 0;
    await http.events(
      res,
      maxMessageBytes,
      "the upstream's GET stream",
      this.options.deliver,
      () => false,
      undefined,
      (id) => {
        this.lastEventId = id;
      },
    );
    return true;
  }

  private ended(controller: AbortController, again: boolean): void {
    if (this.controller === controller) this.controller = undefined;
    if (!again || this.stopped || controller.signal.aborted) return;
    const delay = Math.min(MAX_DELAY_MS, this.options.reopenDelayMs * 2 ** Math.min(this.failures++, 8));
    this.timer = setTimeout(() => this.open(), delay);
    this.timer.unref();
  }

  close(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.controller?.abort();
    this.controller = undefined;
  }
}
