/**
 * @module `toolpacks init --from FILE`: a packs.yaml from a client's MCP server configuration (Claude Desktop,
 * Claude Code, Cursor, VS Code). Secrets are never copied: they become `${VAR}` references.
 */
import type { Command } from "commander";
import { type InitOptions, runInit } from "./init/run.js";

export { type Finding, findSecrets, isHighEntropy, isSecretKey, looksLikeSecret } from "./init/detect.js";
export { listLive, mask } from "./init/live.js";
export { planInit, upstreamName } from "./init/plan.js";
export {
  findServers,
  InitInputError,
  parseClientConfig,
  type ServersKey,
  stripJsonComments,
} from "./init/read.js";
export { type RenderOptions, renderPacks, SCHEMA_LINE, variableLines } from "./init/render.js";
export { OWN_SCHEMA, schemaLine, schemaRef } from "./init/schema.js";
export { envName } from "./init/secrets.js";
export { scalar } from "./init/text.js";
export { collisionLines, exposedNames, type Renamed } from "./init/toolsets.js";
export type { InitPlan, Listing, UpstreamPlan, Variable } from "./init/types.js";
export { compileWritten, dummyEnv } from "./init/written.js";

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
