/** @module Large values out of the model's context: captured results kept per session, passed by `@state:` handle. */

import type { ToolDef } from "../catalog/inventory.js";
import { ErrorCode } from "../protocol.js";
import type { Route } from "../resolve.js";
import { rpcError } from "./errors.js";

export const HANDLE_PREFIX = "@state:";
export const INSPECT_TOOL = "inspect_state";
const PREVIEW_CHARS = 240;
const INSPECT_DEFAULT_BYTES = 4096;
const INSPECT_MAX_BYTES = 16384;

interface Stored {
  readonly key: string;
  readonly tool: string;
  /** The text content, joined; and the structured content, when the result had one. */
  readonly text: string;
  readonly structured?: unknown;
  readonly bytes: number;
}

type Result = Record<string, unknown>;

const byteLength = (s: string) => Buffer.byteLength(s, "utf8");

function textOf(result: Result): string {
  const content = Array.isArray(result.content)
    ? (result.content as { type?: string; text?: unknown }[])
    : [];
  return content
    .filter((c) => c.type === "text" && typeof c.text === "string")
    .map((c) => c.text as string)
    .join("\n");
}

/** The values one session captured: bounded (oldest evicted first), gone with the session, never shared. */
export class HandleStore {
  private readonly values = new Map<string, Stored>();
  private readonly counters = new Map<string, number>();
  private total = 0;

  constructor(private readonly maxBytes: number) {}

  /** Replaces a large result with a compact one that names its handle; small results pass untouched. */
  capture(route: Route, result: Result): Result {
    const over = route.captureOverBytes;
    if (over === undefined || result.isError === true) return result;
    const text = textOf(result);
    const structuredJson =
      result.structuredContent === undefined ? "" : JSON.stringify(result.structuredContent);
    const bytes = Math.max(byteLength(text), byteLength(structuredJson));
    // A value larger than the whole session budget is not kept: the model gets it as the upstream sent it.
    if (bytes <= over || bytes > this.maxBytes) return result;
    const scope = `${route.toolsets[0] ?? route.upstream}/${route.name}`;
    const n = (this.counters.get(scope) ?? 0) + 1;
    this.counters.set(scope, n);
    const key = `${scope}/${n}`;
    this.put({
      key,
      tool: route.name,
      text: text || structuredJson,
      structured: result.structuredContent,
      bytes,
    });
    const handle = `${HANDLE_PREFIX}${key}`;
    const preview = (text || structuredJson).slice(0, PREVIEW_CHARS);
    const note =
      `[toolpacks: this result is ${bytes} bytes, kept out of your context as ${handle}. ` +
      `Pass "${handle}" as an argument to any tool to use the whole value; call ${INSPECT_TOOL} to read parts of it.]`;
    // Only text and structured content are kept behind the handle: images, audio, resource links and embedded
    // resources reach the client as they came, beside it.
    const rest = Array.isArray(result.content)
      ? (result.content as { type?: string }[]).filter((c) => c.type !== "text")
      : [];
    return {
      content: [
        {
          type: "text",
          text: `${preview}${preview.length < (text || structuredJson).length ? "…" : ""}\n\n${note}`,
        },
        ...rest,
      ],
      _meta: { ...(result._meta as object | undefined), "toolpacks/handle": { handle, bytes } },
    };
  }

  /**
   * Replaces every top-level argument whose value is exactly a handle: a string parameter gets the stored text,
   * an object or array parameter the structured content. An unknown or evicted handle is -32602 naming it.
   */
  substitute(definition: ToolDef, args: unknown): unknown {
    if (!args || typeof args !== "object" || Array.isArray(args)) return args;
    let out: Record<string, unknown> | undefined;
    const props =
      (definition.inputSchema as { properties?: Record<string, { type?: unknown }> } | undefined)
        ?.properties ?? {};
    for (const [name, value] of Object.entries(args)) {
      if (typeof value !== "string" || !value.startsWith(HANDLE_PREFIX)) continue;
      const stored = this.values.get(value.slice(HANDLE_PREFIX.length));
      if (!stored) {
        throw rpcError(
          ErrorCode.InvalidParams,
          `Unknown or expired handle ${value} (argument ${name}); call ${INSPECT_TOOL} to list the handles this session holds`,
          {
            handle: value,
          },
        );
      }
      const type = props[name]?.type;
      const wantsData =
        type === "object" || type === "array" || (Array.isArray(type) && !type.includes("string"));
      out ??= { ...(args as Record<string, unknown>) };
      out[name] = wantsData ? (stored.structured ?? parseOr(stored.text)) : stored.text;
    }
    return out ?? args;
  }

  /** inspect_state: list the handles, or read a slice of one (a line range, or a JSON path), size-limited. */
  inspect(args: Record<string, unknown>): Result {
    const limit = Math.min(INSPECT_MAX_BYTES, Math.max(64, Number(args.max_bytes) || INSPECT_DEFAULT_BYTES));
    const raw = typeof args.handle === "string" ? args.handle : undefined;
    if (!raw) {
      const list = [...this.values.values()].map((v) => ({
        handle: `${HANDLE_PREFIX}${v.key}`,
        tool: v.tool,
        bytes: v.bytes,
      }));
      return reply({ handles: list, total_bytes: this.total, max_bytes: this.maxBytes });
    }
    const stored = this.values.get(raw.startsWith(HANDLE_PREFIX) ? raw.slice(HANDLE_PREFIX.length) : raw);
    if (!stored) throw rpcError(ErrorCode.InvalidParams, `Unknown or expired handle ${raw}`, { handle: raw });
    let slice: string;
    if (typeof args.path === "string" && args.path) {
      const value = pick(stored.structured ?? parseOr(stored.text), args.path);
      slice = typeof value === "string" ? value : (JSON.stringify(value, null, 2) ?? "undefined");
    } else if (typeof args.lines === "string" && args.lines) {
      const m = /^(\d+)(?:-(\d+))?$/.exec(args.lines.trim());
      if (!m)
        throw rpcError(
          ErrorCode.InvalidParams,
          `lines must look like "10-40", not ${JSON.stringify(args.lines)}`,
        );
      const from = Math.max(1, Number(m[1]));
      const to = m[2] ? Number(m[2]) : from;
      slice = stored.text
        .split("\n")
        .slice(from - 1, to)
        .join("\n");
    } else slice = stored.text;
    const cut = Buffer.from(slice, "utf8").subarray(0, limit).toString("utf8");
    return reply({
      handle: `${HANDLE_PREFIX}${stored.key}`,
      bytes: stored.bytes,
      slice_bytes: byteLength(slice),
      truncated: cut.length < slice.length,
      value: cut,
    });
  }

  get size(): number {
    return this.values.size;
  }

  private put(v: Stored): void {
    this.values.set(v.key, v);
    this.total += v.bytes;
    for (const [k, old] of this.values) {
      if (this.total <= this.maxBytes || k === v.key) break;
      this.values.delete(k);
      this.total -= old.bytes;
    }
  }
}

function parseOr(text: string): unknown {
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

function reply(payload: Record<string, unknown>): Result {
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
