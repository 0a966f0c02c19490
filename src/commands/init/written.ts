/** @module The check that what init writes is a valid config, whatever the variables it names are set to. */
import { type CatalogResult, compileTexts } from "../../catalog/load.js";

/** Every `${NAME}` in a text set to a harmless value: only to check that a file compiles. */
function dummyEnv(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const m of text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)/g)) env[m[1]!] = "1";
  return env;
}

/** Compiles a text with every referenced variable set: the check that what init writes is a valid config. */
export function compileWritten(file: string, text: string): CatalogResult {
  return compileTexts([{ file, text }], dummyEnv(text));
}
