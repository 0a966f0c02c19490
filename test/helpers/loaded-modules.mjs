/**
 * Preload (`node --import THIS`): records every module the process loads, one absolute path or URL a line, in the
 * file named by TOOLPACKS_LOADED_LOG: ES modules as they load (a loader hook), CommonJS ones at exit.
 */
import { appendFileSync } from "node:fs";
import { createRequire, register } from "node:module";

const log = process.env.TOOLPACKS_LOADED_LOG;
if (log) {
  register(new URL("./loaded-modules-hooks.mjs", import.meta.url), { data: { log } });
  const cache = createRequire(import.meta.url).cache;
  process.on("exit", () => appendFileSync(log, `${Object.keys(cache).join("\n")}\n`));
}
