/**
 * @module Span names and attributes after the MCP semantic conventions (OpenTelemetry GenAI, `mcp.*`), pure.
 * The names are spelled here rather than imported: semantic-conventions marks the `mcp.*` ones deprecated
 * (moved to the GenAI conventions repository), and this module must not load OpenTelemetry when tracing is off.
 */
import type { McpSpanAttributes, SpanOutcome } from "./types.js";

export type Attributes = Record<string, string | number>;

/** `{mcp.method.name} {target}`, or the method alone when there is no low-cardinality target. */
export function spanName(method: string, target: string | undefined): string {
  return target ? `${method} ${target}` : method;
}

export function requestAttributes(
  method: string,
  target: string | undefined,
  a: McpSpanAttributes,
): Attributes {
  const out: Attributes = { "mcp.method.name": method };
  const tool = a.toolName ?? (method === "tools/call" ? target : undefined);
  const prompt = a.promptName ?? (method === "prompts/get" ? target : undefined);
  if (method === "tools/call") out["gen_ai.operation.name"] = "execute_tool";
  if (tool !== undefined) out["gen_ai.tool.name"] = tool;
  if (prompt !== undefined) out["gen_ai.prompt.name"] = prompt;
  return Object.assign(out, laterAttributes(a));
}

/** The attributes that do not depend on the method: what `set()` may add after the start. */
export function laterAttributes(a: McpSpanAttributes): Attributes {
  const out: Attributes = {};
  if (a.requestId !== undefined && a.requestId !== null) out["jsonrpc.request.id"] = String(a.requestId);
  if (a.protocolVersion) out["mcp.protocol.version"] = a.protocolVersion;
  if (a.sessionDigest) out["mcp.session.id"] = a.sessionDigest;
  if (a.transport) out["network.transport"] = a.transport === "stdio" ? "pipe" : "tcp";
  if (a.resourceUri) out["mcp.resource.uri"] = a.resourceUri;
  if (a.serverAddress) out["server.address"] = a.serverAddress;
  if (a.serverPort !== undefined) out["server.port"] = a.serverPort;
  if (a.toolset) out["toolpacks.toolset"] = a.toolset;
  if (a.upstream) out["toolpacks.upstream"] = a.upstream;
  return out;
}

/** What an outcome adds: nothing for success; `error.type` (and the JSON-RPC code) plus a status message. */
export function outcomeAttributes(outcome: SpanOutcome | undefined): {
  attributes: Attributes;
  error?: string;
} {
  if (!outcome) return { attributes: {} };
  if ("result" in outcome) {
    const r = outcome.result as { isError?: unknown } | null | undefined;
    if (r && typeof r === "object" && r.isError === true) {
      return { attributes: { "error.type": "tool_error" }, error: "tool_error" };
    }
    return { attributes: {} };
  }
  const e = outcome.error;
  if (!e || typeof e !== "object") return { attributes: { "error.type": "_OTHER" }, error: String(e) };
  const { code, message, name } = e as { code?: unknown; message?: unknown; name?: unknown };
  const text = typeof message === "string" ? message : String(e);
  if (typeof code === "number") {
    return {
      attributes: { "error.type": String(code), "rpc.response.status_code": String(code) },
      error: text,
    };
  }
  // The error's class: its name when it set one, else its constructor's (TypeError, StoreUnavailableError).
  const type = typeof name === "string" && name !== "Error" ? name : e.constructor?.name || "_OTHER";
  return { attributes: { "error.type": type }, error: text };
}
