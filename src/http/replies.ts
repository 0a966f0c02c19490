/** @module Small HTTP answers: JSON bodies, and a refusal from the error table as its status and JSON-RPC body. */
import type { ServerResponse } from "node:http";
import type { WireError } from "../wire/errors.js";

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/**
 * How every refused request is answered: the error's HTTP status (in band, 200, when it has none) and headers
 * (Retry-After, WWW-Authenticate, Allow …), and a JSON-RPC error body naming the request `id` when known.
 */
export function sendError(
  res: ServerResponse,
  err: WireError,
  id: string | number | null = null,
  headers: Record<string, string> = {},
): void {
  sendJson(res, err.status ?? 200, { jsonrpc: "2.0", id, error: err.body }, { ...err.headers, ...headers });
}
