/** @module Small HTTP answers: JSON bodies and JSON-RPC error bodies. */
import type { ServerResponse } from "node:http";

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

/** A JSON-RPC error body with an HTTP status: how every refused MCP request is answered. */
export function sendRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
  id: string | number | null = null,
  data?: unknown,
): void {
  sendJson(
    res,
    status,
    { jsonrpc: "2.0", id, error: { code, message, ...(data !== undefined ? { data } : {}) } },
    headers,
  );
}
