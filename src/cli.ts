#!/usr/bin/env node
/** @module The command line: the only place that wires the pieces together. */
import { Command } from "commander";
import { checkSummary } from "./commands/check.js";
import { catalogOrExit } from "./commands/common.js";
import { registerServe } from "./commands/serve.js";
import { toolsetsTable } from "./commands/toolsets.js";
import { toolsetsReport } from "./report.js";
import { select } from "./selection.js";
import { VERSION } from "./version.js";

const program = new Command()
  .name("toolpacks")
  .description("An MCP proxy that serves upstream tools grouped by subject, selected by URL.")
  .version(VERSION)
  .showHelpAfterError();

program
  .command("check")
  .description("validate config files and print a summary (exit 1 with every error)")
  .argument("<config...>", "packs.yaml files; toolsets of the same name merge")
  .action((files: string[]) => {
    const catalog = catalogOrExit(files);
    process.stdout.write(`${checkSummary(catalog, files)}\n`);
  });

program
  .command("toolsets")
  .description("show what a URL with a query would activate, without connecting to anything")
  .argument("<config...>", "packs.yaml files")
  .option("--select <query>", "the URL query, e.g. 'issues&without=docs' or 'only=docs'", "")
  .option("--json", "print the /toolsets payload as JSON")
  .action((files: string[], opts: { select: string; json?: boolean }) => {
    const catalog = catalogOrExit(files);
    const selected = select(catalog, opts.select);
    if (!selected.ok) {
      process.stderr.write(`bad selection: ${selected.error}\n`);
      process.exit(2);
    }
    const report = toolsetsReport(catalog, selected.selection);
    process.stdout.write(
      opts.json ? `${JSON.stringify(report, null, 2)}\n` : `${toolsetsTable(catalog, report)}\n`,
    );
  });

registerServe(program);

await program.parseAsync(process.argv);
