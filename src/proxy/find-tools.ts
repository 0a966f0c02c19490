/** @module `find_tools` inside a session: the search of its resolution's deferred tools, and call_tool's arguments. */
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
import { errors } from "../wire/errors.js";
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
  if (!parsed.ok) throw errors.invalidArguments(FIND_TOOLS, parsed.message);
  const { query, limit, toolset } = parsed.value;
  const wait = toolset === undefined ? undefined : waiting.find((w) => w.toolset === toolset);
  if (wait) throw new AuthorizationRequiredError(wait.upstream, wait.url);
  if (toolset !== undefined && !resolution.deferred.some((d) => d.name === toolset)) {
    const deferred = resolution.deferred.map((d) => d.name).join(", ");
    throw errors.invalidArguments(
      FIND_TOOLS,
      `toolset "${toolset}" is not deferred in this session (deferred: ${deferred})`,
    );
  }
  const index = await indexes.of(resolution);
  const result = index.search(query, toolset === undefined ? { limit } : { limit, toolset });
  return findToolsResult(result, waiting) as unknown as Params;
}

/**
 * The tools/call params that call_tool stands for: the named tool with its arguments, the request's `_meta`
 * (progress token) kept. Whether the session runs that name is the registry's to say.
 */
export function throughCallTool(params: Params): Params {
  const parsed = parseCallToolArgs(params.arguments ?? {});
  if (!parsed.ok) throw errors.invalidArguments(CALL_TOOL, parsed.message);
  const { name, arguments: args } = parsed.value;
  return { ...params, name, arguments: args };
}
