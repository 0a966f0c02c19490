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

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
