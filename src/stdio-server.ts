/**
 * @module The server side of stdio: newline-delimited JSON-RPC on this process's stdin and stdout, in place of the
 * SDK's StdioServerTransport, which parses every message with zod (its types.js alone costs ~150 ms to load, on
 * the path of the first answer). Lines are read in linear time up to a bound; a line that is not JSON-RPC is
 * dropped and reported, as the SDK's transport does.
 */
import type { Readable, Writable } from "node:stream";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { SessionTransport } from "./proxy/transport.js";
import { DEFAULT_MAX_LINE_BYTES, LineReader, readMessageLine } from "./upstream/lines.js";
import type { WireError } from "./wire/errors.js";

export class StdioServerTransport implements SessionTransport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  /** Called once the transport has closed (after `onclose`, which belongs to the session). */
  onclosed?: () => void;
  onerror?: (error: Error) => void;
  private closed = false;
  private readonly lines: LineReader;
  private readonly onData = (chunk: Buffer) => this.lines.push(chunk);
  private readonly onInputError = (err: Error) => this.onerror?.(err);

  constructor(
    private readonly input: Readable = process.stdin,
    private readonly output: Writable = process.stdout,
    maxLineBytes = DEFAULT_MAX_LINE_BYTES,
    /** The door's bound on requests in flight: a request past it is answered with the refusal, not served. */
    private readonly admit?: (n: number) => WireError | undefined,
  ) {
    this.lines = new LineReader(
      maxLineBytes,
      (line) => this.read(line),
      () => {
        this.onerror?.(new Error(`a message on stdin is longer than ${maxLineBytes} bytes; closing`));
        void this.close();
      },
    );
  }

  async start(): Promise<void> {
    this.input.on("data", this.onData);
    this.input.on("error", this.onInputError);
  }

  private read(bytes: Buffer): void {
    const read = readMessageLine(bytes);
    if (!read) return;
    if ("problem" in read) {
      this.onerror?.(new Error(`stdin: a line that is ${read.problem} was dropped`));
      return;
    }
    const m = read.message as { id?: string | number; method?: unknown };
    const busy = m.method !== undefined && m.id !== undefined ? this.admit?.(1) : undefined;
    if (busy) void this.send({ jsonrpc: "2.0", id: m.id!, error: busy.body } as JSONRPCMessage);
    else this.onmessage?.(read.message as JSONRPCMessage);
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      if (this.output.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.output.once("drain", resolve);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.lines.stop();
    this.input.off("data", this.onData);
    this.input.off("error", this.onInputError);
    if (this.input.listenerCount("data") === 0) this.input.pause();
    this.onclose?.();
    this.onclosed?.();
  }
}
