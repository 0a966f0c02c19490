/**
 * @module `toolpacks init --from FILE`: a packs.yaml from a client's MCP server configuration (Claude Desktop,
 * Claude Code, Cursor, VS Code). Secrets are never copied: they become `${VAR}` references.
 */
import type { Command } from "commander";
import { type InitOptions, runInit } from "./init/run.js";

export { mask } from "./init/live.js";
export { planInit, upstreamName } from "./init/plan.js";
export {
  InitInputError,
  parseClientConfig,
} from "./init/read.js";
export { renderPacks, SCHEMA_LINE, variableLines } from "./init/render.js";
export { OWN_SCHEMA, schemaRef } from "./init/schema.js";

export { collisionLines } from "./init/toolsets.js";
export type { Listing } from "./init/types.js";
export { compileWritten } from "./init/written.js";

export function registerInit(program: Command): void {
  program
    .command("init")
    .description(
      "write a packs.yaml from a client's MCP server configuration (Claude Desktop, Cursor, VS Code)",
    )
    .requiredOption(
      "--from <file>",
      "the client's configuration file (JSON; comments and trailing commas allowed)",
    )
    .option("-o, --output <file>", "where to write", "packs.yaml")
    .option("--force", "overwrite the output file if it exists")
    .option("--live", "connect to each server and write one toolset per server listing its tools")
    .action((opts: InitOptions) => runInit(opts));
}
