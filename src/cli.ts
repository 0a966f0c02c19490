#!/usr/bin/env node
/** @module The command line: the only place that wires the pieces together. */
import { Command } from "commander";
import { registerCheck } from "./commands/check.js";
import { registerInit } from "./commands/init.js";
import { registerLogin } from "./commands/login.js";
import { registerServe } from "./commands/serve.js";
import { registerToolsets } from "./commands/toolsets.js";
import { VERSION } from "./version.js";

const program = new Command()
  .name("toolpacks")
  .description("An MCP proxy that serves upstream tools grouped by subject, selected by URL.")
  .version(VERSION)
  .showHelpAfterError();

registerCheck(program);
registerToolsets(program);
registerServe(program);
registerInit(program);
registerLogin(program);

await program.parseAsync(process.argv);
