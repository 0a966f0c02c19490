/**
 * @module Newline-delimited reading in linear time and bounded memory: the pieces of an unfinished line are
 * kept as they came, only new bytes are scanned for `\n`, and a line is joined once. Light: no SDK import.
 */

/** 64 MiB: the default bound on one line (one JSON-RPC message) from an upstream. */
export const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024;

/** A line (one message) longer than the configured bound: the reader stops, the upstream is restarted. */
export class LineTooLongError extends Error {
  override readonly name = "LineTooLongError";
  constructor(
    readonly limit: number,
    who: string,
  ) {
    super(`${who} wrote a message longer than max_line_bytes (${limit} bytes)`);
  }
}

export class LineReader {
  private parts: Buffer[] = [];
  private size = 0;
  private stopped = false;

  /**
   * `onLine` gets each line without its `\n` (a `\r` before it is left in place); `onOverflow` is called once
   * when a line grows past `limit` bytes, and nothing is read after it.
   */
  constructor(
    private readonly limit: number,
    private readonly onLine: (line: Buffer) => void,
    private readonly onOverflow: () => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    while (!this.stopped) {
      const nl = chunk.indexOf(10, start);
      const piece = chunk.subarray(start, nl < 0 ? chunk.length : nl);
      if (this.size + piece.length > this.limit) {
        this.overflow();
        return;
      }
      if (nl < 0) {
        if (piece.length) {
          this.parts.push(piece);
          this.size += piece.length;
        }
        return;
      }
      start = nl + 1;
      let line = piece;
      if (this.parts.length) {
        this.parts.push(piece);
        line = Buffer.concat(this.parts, this.size + piece.length);
        this.parts = [];
        this.size = 0;
      }
      this.onLine(line);
    }
  }

  /** Reads nothing more (the source is being closed). */
  stop(): void {
    this.stopped = true;
    this.parts = [];
    this.size = 0;
  }

  /** Bytes of the unfinished line held now. */
  get pending(): number {
    return this.size;
  }

  private overflow(): void {
    this.stop();
    this.onOverflow();
  }
}

/** One line read as a JSON-RPC 2.0 message: the message, or why it is not one; undefined for a blank line. */
export function readMessageLine(
  bytes: Buffer,
): { message: object } | { problem: string; line: string } | undefined {
  const line = bytes.toString("utf8");
  if (!line.trim()) return undefined;
  let message: unknown;
  try {
    message = JSON.parse(line);
  } catch {
    return { problem: "not JSON", line };
  }
  if (message && typeof message === "object" && (message as { jsonrpc?: unknown }).jsonrpc === "2.0") {
    return { message };
  }
  return { problem: "not JSON-RPC 2.0", line };
}
