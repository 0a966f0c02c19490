/** @module Reading a request body with a size limit. */
import type { IncomingMessage } from "node:http";

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
    req.on("data", (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > limit) {
        over = true;
        chunks.length = 0;
        resolve({ ok: false, tooLarge: true });
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (!over)
        resolve({
          ok: true,
          text: chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8"),
        });
    });
    req.on("error", reject);
  });
}
