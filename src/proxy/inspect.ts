/** @module inspect_state: its definition, and the slice of a captured value it returns (lines or a JSON path). */

import type { ToolDef } from "../catalog/inventory.js";
import { ErrorCode } from "../protocol.js";
import type { StoredValue } from "../state/types.js";
import { rpcError } from "./errors.js";

export const HANDLE_PREFIX = "@state:";
export const INSPECT_TOOL = "inspect_state";
const INSPECT_DEFAULT_BYTES = 4096;
const INSPECT_MAX_BYTES = 16384;

type Result = Record<string, unknown>;

/** The `max_bytes` an inspect_state call gets: its own within 64..16384, else 4096. */
export function inspectLimit(args: Record<string, unknown>): number {
  return Math.min(INSPECT_MAX_BYTES, Math.max(64, Number(args.max_bytes) || INSPECT_DEFAULT_BYTES));
}

/** The slice of `stored` that `args` asks for (`path`, `lines`, or the whole text), cut to `limit` bytes. */
export function sliceOf(
  handle: string,
  stored: StoredValue,
  args: Record<string, unknown>,
  limit: number,
): Result {
  let slice: string;
  if (typeof args.path === "string" && args.path) {
    const value = pick(stored.structured ?? parseOr(stored.text), args.path);
    slice = typeof value === "string" ? value : (JSON.stringify(value, null, 2) ?? "undefined");
  } else if (typeof args.lines === "string" && args.lines) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(args.lines.trim());
    if (!m) {
      throw rpcError(
        ErrorCode.InvalidParams,
        `lines must look like "10-40", not ${JSON.stringify(args.lines)}`,
      );
    }
    const from = Math.max(1, Number(m[1]));
    const to = m[2] ? Number(m[2]) : from;
    slice = stored.text
      .split("\n")
      .slice(from - 1, to)
      .join("\n");
  } else slice = stored.text;
  const cut = Buffer.from(slice, "utf8").subarray(0, limit).toString("utf8");
  return reply({
    handle,
    bytes: stored.bytes,
    slice_bytes: Buffer.byteLength(slice, "utf8"),
    truncated: cut.length < slice.length,
    value: cut,
  });
}

export function parseOr(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A small JSON path: `$.a.b[0]`, `a.b.0`, `$["key"]`. */
function pick(value: unknown, path: string): unknown {
  const parts = path
    .replace(/^\$\.?/, "")
    .replace(/\[(\d+)\]/g, ".$1")
    .replace(/\["([^"]*)"\]/g, ".$1")
    .split(".")
    .filter(Boolean);
  let v = value;
  for (const p of parts) v = v && typeof v === "object" ? (v as Record<string, unknown>)[p] : undefined;
  return v;
}

export function reply(payload: Record<string, unknown>): Result {
  return { content: [{ type: "text", text: JSON.stringify(payload, null, 2) }], structuredContent: payload };
}

export const inspectToolDef: ToolDef = Object.freeze({
  name: INSPECT_TOOL,
  title: "Inspect captured values",
  description:
    'List the large values this session holds as @state: handles, or read part of one: a line range (lines: "10-40") or a JSON path (path: "$.features[0].geometry"), up to max_bytes.',
  inputSchema: {
    type: "object",
    properties: {
      handle: {
        type: "string",
        description: "A handle such as @state:files/read_file/1; omit to list them.",
      },
      lines: { type: "string", description: "A line range of the text, e.g. 10-40." },
      path: { type: "string", description: "A JSON path into the structured value, e.g. $.items[0].name." },
      max_bytes: {
        type: "integer",
        description: `At most this many bytes (default ${INSPECT_DEFAULT_BYTES}, max ${INSPECT_MAX_BYTES}).`,
      },
    },
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
});
