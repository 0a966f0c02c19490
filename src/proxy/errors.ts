/** @module Errors on the wire: code, message and data exactly as they should reach the client. */
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";

/**
 * An Error the SDK's Protocol sends as `{code, message, data}`. McpError itself would prefix its message
 * with "MCP error <code>:", once per hop; this keeps the upstream's message verbatim.
 */
export function rpcError(code: number, message: string, data?: unknown): Error {
  return Object.assign(new Error(message), { code, ...(data !== undefined ? { data } : {}) });
}

const PREFIX = /^MCP error -?\d+: /;

/** An error from an upstream call, ready to re-throw downstream: upstream errors verbatim, local ones named. */
export function upstreamError(err: unknown, upstream: string): Error {
  if (err instanceof McpError) {
    const message = err.message.replace(PREFIX, "");
    if (err.code === ErrorCode.RequestTimeout || err.code === ErrorCode.ConnectionClosed) {
      return rpcError(err.code, `upstream ${upstream}: ${message}`, err.data);
    }
    return rpcError(err.code, message, err.data);
  }
  const message = err instanceof Error ? err.message : String(err);
  return rpcError(
    ErrorCode.InternalError,
    message.startsWith(`upstream ${upstream}`) ? message : `upstream ${upstream}: ${message}`,
  );
}
