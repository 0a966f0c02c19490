/** @module Reading a request body with a size limit. */
import type { IncomingMessage } from "node:http";

/**
 * How much of an oversized body is read and dropped before the 413 is sent. A client that is still writing its
 * body when the server answers and closes sees a broken pipe, not the answer (undici, so every fetch client,
 * reports EPIPE or "other side closed"): reading the rest first lets it read the 413. Past this, the answer
 * goes out at once and the connection is closed.
 */
const DRAIN_CAP = 64 * 1024 * 1024;

export type Body = { ok: true; text: string } | { ok: false; tooLarge: true; drained: boolean };

/** Reads at most `limit` bytes; past it, collects nothing more and reads the rest (up to DRAIN_CAP) to drop it. */
export function readBody(req: IncomingMessage, limit: number): Promise<Body> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"]);
    const chunks: Buffer[] = [];
    let size = 0;
    let over = Number.isFinite(declared) && declared > limit;
    let settled = false;
    const tooLarge = (drained: boolean) => {
      if (settled) return;
      settled = true;
      resolve({ ok: false, tooLarge: true, drained });
    };
    if (over && declared > DRAIN_CAP) {
      req.resume();
      tooLarge(false);
      return;
    }
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (over) {
        if (size > DRAIN_CAP) {
          req.pause();
          tooLarge(false);
        }
        return;
      }
      if (size > limit) {
        over = true;
        chunks.length = 0;
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (over) tooLarge(true);
      else {
        settled = true;
        resolve({
          ok: true,
          text: chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8"),
        });
      }
    });
    req.on("error", (err) => {
      if (over) tooLarge(false);
      else reject(err);
    });
  });
}
