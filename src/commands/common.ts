/** @module Helpers shared by the commands. */
import { loadCatalog } from "../catalog/load.js";
import type { Catalog } from "../catalog/types.js";
import { formatConfigError } from "../config/errors.js";

/** The compiled catalog, or every error on stderr and exit 1. */
export function catalogOrExit(files: string[]): Catalog {
  const result = loadCatalog(files);
  if (result.ok) return result.catalog;
  for (const e of result.errors) process.stderr.write(`${formatConfigError(e)}\n`);
  process.stderr.write(`${result.errors.length} error(s)\n`);
  process.exit(1);
}

/** `--no-toolsets-tool`, or `TOOLPACKS_TOOLSETS_TOOL=0`: whether list_server_toolsets is offered. */
export function toolsetsToolOn(flag: boolean): boolean {
  return flag && process.env.TOOLPACKS_TOOLSETS_TOOL !== "0";
}
