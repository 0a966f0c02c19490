/** @module Errors on the wire: code, message and data exactly as they should reach the client. */
import { ErrorCode, McpError } from "../protocol.js";
import { AuthorizationRequiredError } from "../upstream/http-auth.js";

/**
 * An Error the SDK's Protocol sends as `{code, message, data}`. McpError itself would prefix its message
 * with "MCP error <code>:", once per hop; this keeps the upstream's message verbatim.
 */
export function rpcError(code: number, message: string, data?: unknown): Error {
  return Object.assign(new Error(message), { code, ...(data !== undefined ? { data } : {}) });
}

const PREFIX = /^MCP error -?\d+: /;

/**
 * An error from a forwarded request, ready to re-throw to the other side: the peer's own errors verbatim,
 * local ones (timeout, closed connection) naming who they were waiting for: `upstream NAME`, or `the client`.
 */
export function upstreamError(err: unknown, upstream: string): Error {
  const who = upstream === "client" ? "the client" : `upstream ${upstream}`;
  // Typed, with its code, message and data for the wire: the session layer may still turn it into an elicitation.
  if (err instanceof AuthorizationRequiredError) return err;
  if (err instanceof McpError) {
    const message = err.message.replace(PREFIX, "");
    if (err.code === ErrorCode.RequestTimeout || err.code === ErrorCode.ConnectionClosed) {
      return rpcError(err.code, `${who}: ${message}`, err.data);
    }
    return rpcError(err.code, message, err.data);
  }
  const message = err instanceof Error ? err.message : String(err);
  // One of our own wire errors (rpcError) already says what it means: keep its code and data.
  const own = err as { code?: unknown; data?: unknown };
  if (Number.isSafeInteger(own?.code)) return rpcError(own.code as number, message, own.data);
  return rpcError(ErrorCode.InternalError, message.startsWith(who) ? message : `${who}: ${message}`);
}
