/** @module `find_tools` inside a session: the search of its resolution's deferred tools, and call_tool's arguments. */
import { ErrorCode } from "../protocol.js";
import type { Resolution } from "../resolve.js";
import {
  CALL_TOOL,
  FIND_TOOLS,
  findToolsResult,
  parseCallToolArgs,
  parseFindToolsArgs,
} from "../search/tools.js";
import type { WaitingToolset } from "../search/types.js";
import { AuthorizationRequiredError } from "../upstream/http-auth.js";
import { rpcError } from "./errors.js";
import type { Params } from "./host.js";
import type { SearchIndexes } from "./search-indexes.js";

/**
 * Ranks the deferred tools for the query; a `toolset` that is not deferred here is refused, naming those that
 * are. `waiting`: deferred toolsets whose upstream waits for the caller's authorization: naming one is
 * "authorization required" (as a call of its tool is), and the result of any search names them.
 */
export async function findTools(
  indexes: SearchIndexes,
  resolution: Resolution,
  args: unknown,
  waiting: readonly WaitingToolset[] = [],
): Promise<Params> {
  const parsed = parseFindToolsArgs(args ?? {});
  if (!parsed.ok)
    throw rpcError(ErrorCode.InvalidParams, `Invalid arguments for tool ${FIND_TOOLS}: ${parsed.message}`);
  const { query, limit, toolset } = parsed.value;
  const wait = toolset === undefined ? undefined : waiting.find((w) => w.toolset === toolset);
  if (wait) throw new AuthorizationRequiredError(wait.upstream, wait.url);
  if (toolset !== undefined && !resolution.deferred.some((d) => d.name === toolset)) {
    throw rpcError(
      ErrorCode.InvalidParams,
      `Invalid arguments for tool ${FIND_TOOLS}: toolset "${toolset}" is not deferred in this session (deferred: ${resolution.deferred.map((d) => d.name).join(", ")})`,
    );
  }
  const index = await indexes.of(resolution);
  const result = index.search(query, toolset === undefined ? { limit } : { limit, toolset });
  return findToolsResult(result, waiting) as unknown as Params;
}

/**
 * The tools/call params that call_tool stands for: the named tool with its arguments, the request's `_meta`
 * (progress token) kept. `runs` says whether call_tool can run that name (never our call_tool itself); one it
 * cannot is -32602.
 */
export function throughCallTool(params: Params, runs: (name: string) => boolean): Params {
  const parsed = parseCallToolArgs(params.arguments ?? {});
  if (!parsed.ok)
    throw rpcError(ErrorCode.InvalidParams, `Invalid arguments for tool ${CALL_TOOL}: ${parsed.message}`);
  const { name, arguments: args } = parsed.value;
  if (!runs(name)) {
    throw rpcError(
      ErrorCode.InvalidParams,
      `Unknown tool: ${name} (call_tool runs a tool of this session; search with ${FIND_TOOLS} for its exact name)`,
    );
  }
  return { ...params, name, arguments: args };
}
