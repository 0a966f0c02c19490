/**
 * @module MCP's JSON-RPC error codes, protocol versions and error class, without the SDK's types.js: that module
 * builds every zod schema of the protocol when it loads (~150 ms of CPU at start, on the path of the first
 * tools/list). The values are the SDK's (1.32); test/unit/rpc-client.test.ts checks they still are.
 */

export const ErrorCode = {
  ConnectionClosed: -32000,
  RequestTimeout: -32001,
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  UrlElicitationRequired: -32042,
} as const;

export const LATEST_PROTOCOL_VERSION = "2025-11-25";
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [
  LATEST_PROTOCOL_VERSION,
  "2025-06-18",
  "2025-03-26",
  "2024-11-05",
  "2024-10-07",
];
