/**
 * @module Server-Sent Events read off a byte stream in linear time, one event bounded like one stdio line.
 * Lines end with `\n` or `\r\n` (a bare `\r` as a line end, which no MCP server sends, is not recognised).
 */
import { LineReader } from "./lines.js";

export interface SseEvent {
  /** `message` unless the event named another type. */
  readonly event: string;
  readonly data: string;
  /** The last event id seen on this stream (ids persist across events, as in EventSource). */
  readonly id: string | undefined;
}

export class SseReader {
  private readonly lines: LineReader;
  private data: string[] = [];
  private dataBytes = 0;
  private event = "";
  private lastId: string | undefined;

  /** `onOverflow`: one event's data grew past `limit` bytes; nothing is read after it. */
  constructor(
    private readonly limit: number,
    private readonly onEvent: (event: SseEvent) => void,
    private readonly onOverflow: () => void,
    private readonly onRetry?: (ms: number) => void,
  ) {
    this.lines = new LineReader(limit, (line) => this.line(line), onOverflow);
  }

  push(chunk: Buffer): void {
    this.lines.push(chunk);
  }

  stop(): void {
    this.lines.stop();
  }

  /** The id to resume from (`Last-Event-ID`), if the server gave one. */
  get lastEventId(): string | undefined {
    return this.lastId;
  }

  private line(bytes: Buffer): void {
    let line = bytes.toString("utf8");
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (line === "") {
      this.dispatch();
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(line[colon + 1] === " " ? colon + 2 : colon + 1);
    if (field === "data") {
      this.dataBytes += value.length + 1;
      if (this.dataBytes > this.limit) {
        this.lines.stop();
        this.onOverflow();
        return;
      }
      this.data.push(value);
    } else if (field === "event") this.event = value;
    else if (field === "id" && !value.includes("\0")) this.lastId = value;
    else if (field === "retry" && /^\d+$/.test(value)) this.onRetry?.(Number(value));
  }

  private dispatch(): void {
    const data = this.data;
    const event = this.event || "message";
    this.data = [];
    this.dataBytes = 0;
    this.event = "";
    if (data.length) this.onEvent({ event, data: data.join("\n"), id: this.lastId });
  }
}
