/** @module Reading a request body with a size limit. */
import type { IncomingMessage } from "node:http";

/** How much of an oversized body is read and dropped, so that the client is still reading when the 413 comes. */
const DRAIN_CAP = 64 * 1024 * 1024;

export type Body = { ok: true; text: string } | { ok: false; tooLarge: true };

/** Reads at most `limit` bytes; past it, stops collecting (and keeps draining so the client can read a 413). */
export function readBody(req: IncomingMessage, limit: number): Promise<Body> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"]);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      resolve({ ok: false, tooLarge: true });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    const answer = () => resolve({ ok: false, tooLarge: true });
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (over) {
        // Keep reading what the client still sends, so that it is listening when the 413 comes; but not forever.
        if (size > DRAIN_CAP) {
          req.pause();
          answer();
        }
        return;
      }
      if (size > limit) {
        over = true;
        chunks.length = 0;
        if (!Number.isFinite(declared)) return;
        answer();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (over) answer();
      else
        resolve({
          ok: true,
          text: chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8"),
        });
    });
    req.on("error", reject);
  });
}
