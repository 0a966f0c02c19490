/** @module Tool search for deferred toolsets: the index, the find_tools/call_tool definitions and their results. */
export { BUILD_CHUNK, buildIndex, buildIndexAsync, DEFAULT_RANKING, MAX_QUERY_TERMS } from "./build.js";
export {
  CALL_TOOL,
  type CallToolArgs,
  callToolDef,
  DEFAULT_LIMIT,
  deferredToolDefs,
  FIND_TOOLS,
  type FindToolsArgs,
  findToolsDef,
  findToolsResult,
  MAX_LIMIT,
  type Parsed,
  parseCallToolArgs,
  parseFindToolsArgs,
} from "./tools.js";
export type {
  Ranking,
  SearchEntry,
  SearchField,
  SearchOptions,
  SearchResult,
  ToolHit,
  ToolIndex,
  WaitingToolset,
} from "./types.js";
