/** @module The HTTP headers a 2026-07-28 POST mirrors from its body (SEP-2243): check them on the way in, build them on the way out. */

import { errors, type WireError } from "../wire/errors.js";
import { type Headers, header } from "./classify.js";
import { isRecord, MODERN_VERSION } from "./wire.js";

const headerMismatch = errors.headerMismatch;

/**
 * The body field `Mcp-Name` mirrors, per method (transports/streamable-http §Standard request headers); the
 * tasks extension (SEP-2663 §Routing headers) adds `params.taskId` for tasks/get, tasks/update, tasks/cancel.
 */
const MCP_NAME_SOURCE: Readonly<Record<string, "name" | "uri" | "taskId">> = Object.freeze({
  "tools/call": "name",
  "prompts/get": "name",
  "resources/read": "uri",
  "tasks/get": "taskId",
  "tasks/update": "taskId",
  "tasks/cancel": "taskId",
});

const PREFIX = "=?base64?";
const SUFFIX = "?=";
/** Canonical padded base64 (RFC 4648 §4): the only spelling a sentinel value may use. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** RFC 9110 §5.1 token: what an `x-mcp-header` name must be. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Visible ASCII, space and tab inside (RFC 9110 §5.5). */
const PLAIN = /^[\x21-\x7e](?:[\x20-\x7e\t]*[\x21-\x7e])?$/;

/** A header value as sent: the sentinel decoded (strictly), anything else literal; undefined if malformed. */
export function decodeHeaderValue(value: string): string | undefined {
  if (
    !(value.startsWith(PREFIX) && value.endsWith(SUFFIX) && value.length >= PREFIX.length + SUFFIX.length)
  ) {
    return PLAIN.test(value) ? value : undefined;
  }
  const b64 = value.slice(PREFIX.length, value.length - SUFFIX.length);
  if (!BASE64.test(b64)) return undefined;
  const bytes = Buffer.from(b64, "base64");
  if (bytes.toString("base64") !== b64) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** The header spelling of a value: as is when plain ASCII, else the `=?base64?…?=` sentinel (§Value encoding). */
export function encodeHeaderValue(value: string): string {
  const sentinelLike = value.startsWith(PREFIX) && value.endsWith(SUFFIX);
  if (PLAIN.test(value) && !sentinelLike) return value;
  return `${PREFIX}${Buffer.from(value, "utf8").toString("base64")}${SUFFIX}`;
}

/**
 * Checks the standard headers of a 2026 request against its body: `MCP-Protocol-Version` and `Mcp-Method`
 * required on every request, `Mcp-Name` on tools/call, prompts/get and resources/read (decoded, compared
 * exactly: values are case-sensitive). Undefined when they agree; else `-32020` with HTTP 400.
 */
export function checkStandardHeaders(
  headers: Headers,
  body: { method: string; params?: unknown },
): WireError | undefined {
  const version = header(headers, "mcp-protocol-version");
  if (version === undefined)
    return headerMismatch("MCP-Protocol-Version is required", "MCP-Protocol-Version");
  const method = header(headers, "mcp-method");
  if (method === undefined) return headerMismatch("Mcp-Method is required", "Mcp-Method");
  if (method !== body.method) {
    return headerMismatch(`Mcp-Method '${method}' does not match body method '${body.method}'`, "Mcp-Method");
  }
  const field = Object.hasOwn(MCP_NAME_SOURCE, body.method) ? MCP_NAME_SOURCE[body.method] : undefined;
  if (!field) return undefined;
  const source = isRecord(body.params) ? body.params[field] : undefined;
  const raw = header(headers, "mcp-name");
  if (raw === undefined) {
    return typeof source === "string"
      ? headerMismatch(`Mcp-Name is required for ${body.method}`, "Mcp-Name")
      : undefined;
  }
  const name = decodeHeaderValue(raw);
  if (name === undefined) return headerMismatch("Mcp-Name is not a valid header value", "Mcp-Name");
  if (typeof source === "string" && name !== source) {
    return headerMismatch(`Mcp-Name '${name}' does not match body ${field} '${source}'`, "Mcp-Name");
  }
  return undefined;
}

/** One `x-mcp-header` annotation of a tool's inputSchema. */
export interface ParamHeader {
  /** The chain of `properties` keys from the arguments root. */
  readonly path: readonly string[];
  /** `{Name}` of `Mcp-Param-{Name}`, as declared. */
  readonly name: string;
  readonly type: "string" | "integer" | "boolean" | "number";
}

export type ParamHeaderScan =
  | { readonly ok: true; readonly params: readonly ParamHeader[] }
  | { readonly ok: false; readonly reason: string };

/** Keywords an annotated property may not sit under (server/tools §x-mcp-header: statically reachable only). */
const UNREACHABLE = [
  "items",
  "prefixItems",
  "contains",
  "additionalProperties",
  "unevaluatedProperties",
  "unevaluatedItems",
  "propertyNames",
  "patternProperties",
  "dependentSchemas",
  "oneOf",
  "anyOf",
  "allOf",
  "not",
  "if",
  "then",
  "else",
  "$defs",
  "definitions",
] as const;
/** The keywords among those whose value maps names to subschemas. */
const MAPS: ReadonlySet<string> = new Set(["patternProperties", "dependentSchemas", "$defs", "definitions"]);
/** `number` is outside the spec's list; allowed because the conformance suite's own client tools use it. */
const TYPES: ReadonlySet<string> = new Set(["string", "integer", "boolean", "number"]);

/**
 * The `x-mcp-header` annotations of a tool's inputSchema, or why the tool is invalid: an empty or non-token
 * name, a duplicate (case-insensitive), a non-primitive type, or an annotation anywhere but on a property
 * reached through `properties` keys alone. A client over HTTP must drop such a tool from tools/list.
 */
export function scanParamHeaders(inputSchema: unknown): ParamHeaderScan {
  const found: ParamHeader[] = [];
  const seen = new Set<string>();
  const visit = (node: unknown, path: readonly string[], reachable: boolean): string | undefined => {
    if (!isRecord(node)) return undefined;
    if ("x-mcp-header" in node) {
      const where = path.join(".") || "<root>";
      const name = node["x-mcp-header"];
      if (!reachable || path.length === 0)
        return `${where}: x-mcp-header is allowed only on properties reached through 'properties'`;
      if (typeof name !== "string" || !TOKEN.test(name))
        return `${where}: x-mcp-header must be an HTTP token`;
      if (typeof node.type !== "string" || !TYPES.has(node.type))
        return `${where}: x-mcp-header needs a string, integer or boolean property`;
      if (seen.has(name.toLowerCase())) return `${where}: x-mcp-header '${name}' is declared twice`;
      seen.add(name.toLowerCase());
      found.push({ path, name, type: node.type as ParamHeader["type"] });
    }
    if (isRecord(node.properties)) {
      for (const [key, child] of Object.entries(node.properties)) {
        const fault = visit(child, [...path, key], reachable);
        if (fault) return fault;
      }
    }
    for (const k of UNREACHABLE) {
      const sub = node[k];
      const branches = Array.isArray(sub) ? sub : MAPS.has(k) && isRecord(sub) ? Object.values(sub) : [sub];
      for (const b of branches) {
        const fault = visit(b, [...path, `<${k}>`], false);
        if (fault) return fault;
      }
    }
    return undefined;
  };
  const fault = visit(inputSchema, [], true);
  return fault ? { ok: false, reason: fault } : { ok: true, params: found };
}

/** The header string of a primitive argument (§Value encoding, type conversion); undefined for anything else. */
function paramString(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "boolean") return String(value);
  if (
    typeof value === "number" &&
    Number.isFinite(value) &&
    (!Number.isInteger(value) || Number.isSafeInteger(value))
  )
    return String(value);
  return undefined;
}

function valueAt(args: unknown, path: readonly string[]): unknown {
  let node = args;
  for (const key of path) node = isRecord(node) ? node[key] : undefined;
  return node;
}

/**
 * Checks the `Mcp-Param-{Name}` headers of a tools/call against its arguments (§Server behavior for custom
 * headers): a value in the body needs its header, decoding to the same value (integers compared as numbers);
 * a null or absent value needs none. Undefined when they agree; else `-32020` with HTTP 400.
 */
export function checkParamHeaders(
  headers: Headers,
  params: readonly ParamHeader[],
  args: unknown,
): WireError | undefined {
  for (const p of params) {
    const value = valueAt(args, p.path);
    if (value === undefined || value === null) continue;
    const expected = paramString(value);
    if (expected === undefined) continue; // a non-primitive is the arguments' fault: input validation answers it
    const headerName = `Mcp-Param-${p.name}`;
    const raw = header(headers, headerName);
    if (raw === undefined)
      return headerMismatch(`${headerName} is required: the arguments carry ${p.path.join(".")}`, headerName);
    const got = decodeHeaderValue(raw);
    if (got === undefined) return headerMismatch(`${headerName} is not a valid header value`, headerName);
    const numeric =
      (p.type === "integer" || p.type === "number") &&
      typeof value === "number" &&
      /^-?\d+(\.\d+)?$/.test(got);
    if (numeric ? Number(got) !== value : got !== expected) {
      return headerMismatch(`${headerName} does not match the arguments' ${p.path.join(".")}`, headerName);
    }
  }
  return undefined;
}

/**
 * The headers of a 2026 POST this proxy sends upstream (the client side of SEP-2243): the version, the
 * method, `Mcp-Name` from the (rewritten) body, and `Mcp-Param-*` from the upstream tool's annotations.
 */
export function requestHeaders(
  body: { method: string; params?: unknown },
  params: readonly ParamHeader[] = [],
  version: string = MODERN_VERSION,
): Record<string, string> {
  const out: Record<string, string> = { "mcp-protocol-version": version, "mcp-method": body.method };
  const field = Object.hasOwn(MCP_NAME_SOURCE, body.method) ? MCP_NAME_SOURCE[body.method] : undefined;
  const source = field && isRecord(body.params) ? body.params[field] : undefined;
  if (typeof source === "string") out["mcp-name"] = encodeHeaderValue(source);
  const args = isRecord(body.params) ? body.params.arguments : undefined;
  for (const p of params) {
    const s = paramString(valueAt(args, p.path));
    if (s !== undefined) out[`mcp-param-${p.name.toLowerCase()}`] = encodeHeaderValue(s);
  }
  return out;
}
