/** @module `find_tools` and `call_tool`: the two tools a session lists instead of its deferred toolsets' tools. */
import type { ToolDef } from "../catalog/inventory.js";
import type { SearchResult, WaitingToolset } from "./types.js";

export const FIND_TOOLS = "find_tools";
export const CALL_TOOL = "call_tool";
const DEFAULT_LIMIT = 5;
const MAX_LIMIT = 20;
/**
 * A query is a few words; past this many characters it is refused (-32602), so that no request makes the
 * proxy tokenize a pasted document while other sessions wait.
 */
export const MAX_QUERY_LENGTH = 1024;

export const findToolsDef: ToolDef = Object.freeze({
  name: FIND_TOOLS,
  title: "Find tools",
  description:
    "Search the tools this server keeps out of the tool list. It matches words, not meaning: use the " +
    "words a tool would be named or described with, an action and its object, and the product if known " +
    '("create issue GitHub", "list files in a folder"), or give a tool name; an empty query lists them ' +
    "by name. Returns the best matches with their inputSchema, and how many matched; run one with " +
    "call_tool. If none fits, search again with other words.",
  inputSchema: Object.freeze({
    type: "object",
    properties: {
      query: {
        type: "string",
        maxLength: MAX_QUERY_LENGTH,
        description: "What you want to do, or a tool name.",
      },
      limit: { type: "integer", minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
      toolset: { type: "string", description: "Search only this toolset." },
    },
    required: ["query"],
    additionalProperties: false,
  }),
  annotations: Object.freeze({
    readOnlyHint: true,
    idempotentHint: true,
    destructiveHint: false,
    openWorldHint: false,
  }),
});

export const callToolDef: ToolDef = Object.freeze({
  name: CALL_TOOL,
  title: "Call a found tool",
  description:
    "Run a tool that find_tools returned: its exact name, and arguments matching its inputSchema. " +
    "Returns that tool's own result.",
  inputSchema: Object.freeze({
    type: "object",
    properties: {
      name: { type: "string", description: "The tool's name, as find_tools gave it." },
      arguments: { type: "object", description: "The tool's arguments." },
    },
    required: ["name"],
    additionalProperties: false,
  }),
  annotations: Object.freeze({ readOnlyHint: false, openWorldHint: true }),
});

/** What a session lists for its deferred toolsets, whatever their size. */
export const deferredToolDefs: readonly ToolDef[] = Object.freeze([findToolsDef, callToolDef]);

/**
 * find_tools when a listed upstream tool is named call_tool (it wins the name): the description must not send
 * the model to that tool, so it says to call a found tool by its own name (a deferred tool is served by name).
 */
export const findToolsDefBeside: ToolDef = Object.freeze({
  ...findToolsDef,
  description: (findToolsDef.description as string).replace(
    "run one with call_tool.",
    "call one by its own name (the tool named call_tool here is another tool: it does not run them).",
  ),
});

/** call_tool when a listed upstream tool is named find_tools: the deferred tools cannot be searched here. */
export const callToolDefBeside: ToolDef = Object.freeze({
  ...callToolDef,
  description:
    "Run a tool this server keeps out of the tool list: its exact name, and arguments matching its " +
    "inputSchema. Returns that tool's own result. They cannot be searched here: the tool named " +
    "find_tools here is another tool.",
  inputSchema: Object.freeze({
    ...(callToolDef.inputSchema as Record<string, unknown>),
    properties: {
      name: { type: "string", description: "The tool's exact name." },
      arguments: { type: "object", description: "The tool's arguments." },
    },
  }),
});

export interface FindToolsArgs {
  readonly query: string;
  readonly limit: number;
  readonly toolset?: string;
}

export interface CallToolArgs {
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>>;
}

/** A parse either gives the arguments or says, for the model, what is wrong (send as -32602). */
export type Parsed<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly message: string };

export function parseFindToolsArgs(args: unknown): Parsed<FindToolsArgs> {
  if (!isRecord(args)) return fail("find_tools takes an object: {query, limit?, toolset?}");
  const extra = Object.keys(args).find((k) => k !== "query" && k !== "limit" && k !== "toolset");
  if (extra !== undefined)
    return fail(`find_tools has no argument "${extra}" (it takes query, limit, toolset)`);
  const { query, limit = DEFAULT_LIMIT, toolset } = args;
  if (typeof query !== "string") return fail("query is required: a string saying what you want to do");
  if (longerThan(query, MAX_QUERY_LENGTH))
    return fail(`query is at most ${MAX_QUERY_LENGTH} characters: a few words saying what you want to do`);
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    return fail(`limit must be an integer from 1 to ${MAX_LIMIT}`);
  if (toolset !== undefined && typeof toolset !== "string") return fail("toolset must be a string");
  return { ok: true, value: toolset === undefined ? { query, limit } : { query, limit, toolset } };
}

export function parseCallToolArgs(args: unknown): Parsed<CallToolArgs> {
  if (!isRecord(args)) return fail("call_tool takes an object: {name, arguments?}");
  const extra = Object.keys(args).find((k) => k !== "name" && k !== "arguments");
  if (extra !== undefined)
    return fail(`call_tool has no argument "${extra}" (put the tool's own arguments in "arguments")`);
  const { name, arguments: inner = {} } = args;
  if (typeof name !== "string" || name === "") return fail("name is required: a tool name from find_tools");
  if (!isRecord(inner)) return fail("arguments must be an object");
  return { ok: true, value: { name, arguments: inner } };
}

/**
 * The find_tools result: the hits as structuredContent, and the same JSON as text for older clients; with the
 * deferred toolsets that wait for an authorization (their tools cannot be searched until then), and where.
 */
export function findToolsResult(
  result: SearchResult,
  waiting: readonly WaitingToolset[] = [],
): {
  content: [{ type: "text"; text: string }];
  structuredContent: {
    tools: SearchResult["tools"];
    total: number;
    authorization_required?: readonly WaitingToolset[];
  };
} {
  const structuredContent = {
    tools: result.tools,
    total: result.total,
    ...(waiting.length ? { authorization_required: waiting } : {}),
  };
  return { content: [{ type: "text", text: JSON.stringify(structuredContent) }], structuredContent };
}

/** Longer than `max` characters as JSON Schema's maxLength counts them (code points, not UTF-16 units). */
function longerThan(text: string, max: number): boolean {
  if (text.length <= max) return false;
  if (text.length > 2 * max) return true;
  let points = 0;
  for (const _ of text) if (++points > max) return true;
  return false;
}

function fail(message: string): { ok: false; message: string } {
  return { ok: false, message };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
