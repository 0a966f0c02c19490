#!/usr/bin/env node
/** @module The command line: the only place that wires the pieces together. */
import type { Command } from "commander";
import { VERSION } from "./version.js";

type Register = (program: Command) => void;

// `serve` compiles its config and spawns its upstreams first, before commander and the rest load (serve-early.ts).
const early =
  process.argv[2] === "serve"
    ? (await import("./commands/serve-early.js")).startEarly(process.argv.slice(3), process.env)
    : undefined;

/**
 * Each command's module loads only when that command runs (or for help): a client that launches `serve` at every
 * start does not pay for `init`, `login` and their dependencies before its upstreams are spawned.
 */
const commands: Record<string, () => Promise<Register>> = {
  check: () => import("./commands/check.js").then((m) => m.registerCheck),
  toolsets: () => import("./commands/toolsets.js").then((m) => m.registerToolsets),
  eval: () => import("./commands/eval.js").then((m) => m.registerEval),
  advise: () => import("./commands/advise.js").then((m) => m.registerAdvise),
  serve: () => import("./commands/serve.js").then((m) => (p: Command) => m.registerServe(p, early)),
  init: () => import("./commands/init.js").then((m) => m.registerInit),
  login: () => import("./commands/login.js").then((m) => m.registerLogin),
};

const { Command: Program } = await import("commander");
const program = new Program()
  .name("toolpacks")
  .description("An MCP proxy that serves upstream tools grouped by subject, selected by URL.")
  .version(VERSION)
  .showHelpAfterError();

const named = Object.hasOwn(commands, process.argv[2] ?? "") ? commands[process.argv[2]!] : undefined;
for (const register of await Promise.all((named ? [named] : Object.values(commands)).map((load) => load())))
  register(program);

await program.parseAsync(process.argv);
