/**
 * @module Bounded output on one response (an SSE stream or a JSON answer) to a client that may read slowly or
 * not at all. Past `pendingBytes` unsent, notifications are not queued: progress keeps only the latest per
 * token (sent, before anything else, once the client catches up), other notifications are dropped. Answers and
 * server→client requests are always written. A response that holds unsent output while its reader takes none
 * of it for `stalledMs` has its connection closed, which frees what was queued.
 */
import type { ServerResponse } from "node:http";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

export interface OutputLimits {
  /** Unsent bytes past which notifications are held or dropped. */
  readonly pendingBytes: number;
  /** How long unsent output may wait while the reader takes none of it. */
  readonly stalledMs: number;
}

export interface OutputEvents {
  /** The first notification this response could not queue (called once per response). */
  dropping?(pendingBytes: number): void;
  /** The reader took nothing for `stalledMs`: its connection is being closed. */
  stalled?(pendingBytes: number, dropped: number): void;
}

/** Unsent bytes from which a response is watched for a stalled reader (most answers never get there). */
const WATCH_FROM = 64 * 1024;

function sseEvent(message: JSONRPCMessage): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

function isNotification(m: JSONRPCMessage): m is JSONRPCMessage & { method: string; params?: unknown } {
  return "method" in m && !("id" in m);
}

export class OutputGuard {
  /** Progress held while the client is behind, latest per progress token. */
  private held: Map<unknown, string> | undefined;
  private dropped = 0;
  private warned = false;
  private drainArmed = false;
  private timer: NodeJS.Timeout | undefined;
  private lastPending = 0;
  private added = 0;
  private lastProgress = 0;

  /** Watches a response already ended with its whole body, if enough of it is still unsent to matter. */
  static afterEnd(res: ServerResponse, limits: OutputLimits, events?: OutputEvents): void {
    if (res.writableLength > Math.min(WATCH_FROM, limits.pendingBytes))
      new OutputGuard(res, limits, events).check();
  }

  constructor(
    private readonly res: ServerResponse,
    private readonly limits: OutputLimits,
    private readonly events: OutputEvents = {},
    private readonly now: () => number = Date.now,
  ) {
    res.once("close", () => this.unwatch());
  }

  /** Writes one message as an SSE event, or holds or drops it when it is a notification the client is behind on. */
  event(message: JSONRPCMessage): void {
    const res = this.res;
    if (res.destroyed) return;
    if (isNotification(message) && res.writableLength > this.limits.pendingBytes) {
      this.behind(message);
      return;
    }
    this.flushHeld();
    this.write(sseEvent(message));
  }

  /** Ends the response (with a JSON body, or an SSE stream's end) and watches it until it is flushed. */
  end(body?: string): void {
    if (this.res.destroyed) return;
    this.flushHeld();
    if (body !== undefined) this.added += Buffer.byteLength(body);
    this.res.end(body);
    this.check();
  }

  private write(text: string): void {
    this.added += Buffer.byteLength(text);
    this.res.write(text);
    this.check();
  }

  private behind(message: { method: string; params?: unknown }): void {
    if (!this.warned) {
      this.warned = true;
      this.events.dropping?.(this.res.writableLength);
    }
    if (!this.drainArmed) {
      this.drainArmed = true;
      this.res.once("drain", () => {
        this.drainArmed = false;
        this.flushHeld();
      });
    }
    const token = (message.params as { progressToken?: unknown } | undefined)?.progressToken;
    if (message.method === "notifications/progress" && token !== undefined) {
      this.held ??= new Map();
      if (this.held.has(token)) this.dropped++;
      this.held.set(token, sseEvent(message as JSONRPCMessage));
    } else this.dropped++;
    this.check();
  }

  private flushHeld(): void {
    const held = this.held;
    if (!held?.size || this.res.destroyed || this.res.writableEnded) return;
    this.held = new Map();
    for (const text of held.values()) this.write(text);
  }

  /** Starts watching for a stalled reader once enough is unsent to matter. */
  private check(): void {
    if (this.timer || this.res.writableLength <= Math.min(WATCH_FROM, this.limits.pendingBytes)) return;
    this.lastPending = this.res.writableLength;
    this.added = 0;
    this.lastProgress = this.now();
    this.timer = setInterval(() => this.tick(), Math.max(10, this.limits.stalledMs / 4));
    this.timer.unref();
  }

  private tick(): void {
    const res = this.res;
    const pending = res.destroyed ? 0 : res.writableLength;
    if (pending === 0) {
      this.unwatch();
      return;
    }
    const taken = this.lastPending + this.added - pending;
    this.lastPending = pending;
    this.added = 0;
    if (taken > 0) this.lastProgress = this.now();
    else if (this.now() - this.lastProgress >= this.limits.stalledMs) {
      this.unwatch();
      this.events.stalled?.(pending, this.dropped);
      this.held = undefined;
      res.destroy();
    }
  }

  private unwatch(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
