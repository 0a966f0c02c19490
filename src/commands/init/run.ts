/** @module What `toolpacks init` does once its options are parsed: read, plan, list (--live), check, write, tell. */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { resolve as resolvePath } from "node:path";
import { formatConfigError } from "../../config/errors.js";
import { unreadable } from "../../config/load.js";
import { listLive, mask } from "./live.js";
import { planInit } from "./plan.js";
import { InitInputError, parseClientConfig } from "./read.js";
import { renderPacks, variableLines } from "./render.js";
import { schemaRef } from "./schema.js";
import { collisionLines } from "./toolsets.js";
import type { InitPlan, Listing } from "./types.js";
import { compileWritten } from "./written.js";

export interface InitOptions {
  from: string;
  output: string;
  force?: boolean;
  live?: boolean;
}

function fail(message: string, code: number): void {
  process.stderr.write(`init: ${message}\n`);
  process.exitCode = code;
}

export async function runInit(opts: InitOptions): Promise<void> {
  let text: string;
  try {
    text = readFileSync(opts.from, "utf8");
  } catch (err) {
    const { message, hint } = unreadable(opts.from, err);
    return fail(`cannot read ${opts.from}: ${message}${hint ? ` (${hint})` : ""}`, 1);
  }
  let plan: InitPlan;
  try {
    plan = planInit(parseClientConfig(text), opts.from);
  } catch (err) {
    if (err instanceof InitInputError) return fail(`${opts.from}: ${err.message}`, 1);
    throw err;
  }
  const out = resolvePath(opts.output);
  if (existsSync(out) && !opts.force) return fail(`${opts.output} exists; pass --force to overwrite it`, 2);

  // What the client file alone says comes at once, before --live waits for the servers.
  for (const s of plan.skipped)
    process.stderr.write(`init: skipped ${JSON.stringify(s.original)}: ${s.reason}\n`);
  for (const w of plan.warnings) process.stderr.write(`init: ${w}\n`);
  let live: Map<string, Listing> | undefined;
  if (opts.live) {
    try {
      live = await listLive(plan, out);
    } catch (err) {
      return fail((err as Error).message, 1);
    }
  }
  const yaml = renderPacks(plan, live, { schema: schemaRef(out), env: process.env });
  const compiled = compileWritten(opts.output, yaml);
  if (!compiled.ok) {
    for (const e of compiled.errors) process.stderr.write(`${mask(formatConfigError(e), plan.variables)}\n`);
    return fail(
      `the file made from ${opts.from} does not compile; nothing was written. This is a bug in toolpacks init: please report it with the client file (secrets removed)`,
      1,
    );
  }
  try {
    writeFileSync(out, yaml, { flag: opts.force ? "w" : "wx" });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return fail(`${opts.output} exists; pass --force to overwrite it`, 2);
    return fail(`cannot write ${opts.output}: ${code ?? (err as Error).message}`, 1);
  }

  for (const [name, l] of live ?? []) {
    if (!l.ok)
      process.stderr.write(`init: ${name} was not reached (${l.reason}); it has no toolset of its own\n`);
  }
  if (live)
    for (const line of collisionLines(plan, live, opts.output)) process.stderr.write(`init: ${line}\n`);
  else if (plan.upstreams.length > 1)
    process.stderr.write(
      `init: tool names two servers share are only known with --live: \`toolpacks check --live ${opts.output}\` reports them (rename with "as:" or "prefix:")\n`,
    );
  const vars = variableLines(plan, process.env);
  if (vars.length) {
    process.stderr.write(
      `init: set these environment variables where toolpacks serve runs (secret values in ${opts.from} were not copied):\n${vars.join("\n")}\n`,
    );
  }
  const names = plan.upstreams.map((u) => u.name);
  const toolsets = compiled.catalog.toolsets.filter((t) => !t.implicit).length;
  process.stdout.write(
    `wrote ${opts.output}: ${names.length} upstream(s) (${names.join(", ")})${
      live
        ? `, ${toolsets} toolset(s) to regroup by subject`
        : "; each is served as a toolset of its own name"
    }\nnext: toolpacks check ${opts.output}, then toolpacks serve ${opts.output}\n`,
  );
}
