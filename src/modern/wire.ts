/** @module MCP 2026-07-28 wire vocabulary: the reserved `_meta` keys, versions, error codes and their HTTP statuses. */

/** The one modern revision this code knows (basic/versioning: "modern" = per-request `_meta`, 2026-07-28 on). */
export const MODERN_VERSION = "2026-07-28";

/** Reserved `_meta` keys (basic/index §General fields, `_meta`, reserved keys). */
export const META_KEYS = Object.freeze({
  protocolVersion: "io.modelcontextprotocol/protocolVersion",
  clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  clientInfo: "io.modelcontextprotocol/clientInfo",
  logLevel: "io.modelcontextprotocol/logLevel",
  serverInfo: "io.modelcontextprotocol/serverInfo",
  subscriptionId: "io.modelcontextprotocol/subscriptionId",
} as const);

/** Error codes (basic/index §Error codes; schema.ts). -32020…-32099 are reserved for the spec. */
export const CODES = Object.freeze({
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  headerMismatch: -32020,
  missingRequiredClientCapability: -32021,
  unsupportedProtocolVersion: -32022,
} as const);

/** The eight syslog levels a request may ask for in `io.modelcontextprotocol/logLevel` (server/utilities/logging). */
export const LOG_LEVELS = Object.freeze([
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
] as const);
export type LogLevel = (typeof LOG_LEVELS)[number];

export function isLogLevel(v: unknown): v is LogLevel {
  return LOG_LEVELS.includes(v as LogLevel);
}

/** The methods that may answer `resultType: "input_required"` (basic/patterns/mrtr §Supported requests). */
export const INPUT_REQUIRED_METHODS: ReadonlySet<string> = new Set([
  "tools/call",
  "prompts/get",
  "resources/read",
]);

/**
 * A refusal to put on the wire: the HTTP status and the JSON-RPC error. Plain data, not an Error class: the
 * caller sends it (an HTTP entry: status + body; stdio: the error alone) or throws it as an SDK error.
 */
export interface WireRefusal {
  readonly status: number;
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

export function refusal(status: number, code: number, message: string, data?: unknown): WireRefusal {
  return Object.freeze({ status, code, message, ...(data === undefined ? {} : { data }) });
}

/** `-32022` with the `supported`/`requested` data the spec requires (basic/versioning §Negotiation). */
export function unsupportedVersion(requested: string, supported: readonly string[]): WireRefusal {
  return refusal(400, CODES.unsupportedProtocolVersion, `Unsupported protocol version: ${requested}`, {
    supported: [...supported],
    requested,
  });
}

/** `-32020`: a mirrored header disagrees with the body, or a required one is missing or malformed. */
export function headerMismatch(message: string, header: string): WireRefusal {
  return refusal(400, CODES.headerMismatch, `Header mismatch: ${message}`, { header });
}

/** `-32021` naming the missing capabilities as a ClientCapabilities object (schema.ts). */
export function missingCapability(required: Readonly<Record<string, object>>, why: string): WireRefusal {
  return refusal(400, CODES.missingRequiredClientCapability, why, { requiredCapabilities: { ...required } });
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
