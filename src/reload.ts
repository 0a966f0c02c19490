/** @module Reloading the config: SIGHUP or a watched file change; an invalid config never replaces a valid one. */
import { type FSWatcher, watch } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { loadCatalog } from "./catalog/load.js";
import { formatConfigError } from "./config/errors.js";
import type { Front } from "./door/front.js";
import type { Logger } from "./log.js";

/** Recompiles `files`; on success swaps the serving core's catalog, on failure logs every error and keeps the old one. */
async function reloadConfig(
  gateway: Pick<Front, "catalog" | "reload" | "sessionCount">,
  files: readonly string[],
  logger: Logger,
): Promise<boolean> {
  const result = loadCatalog(files);
  if (!result.ok) {
    for (const e of result.errors) logger.error(`reload refused: ${formatConfigError(e)}`);
    logger.error("reload refused: still serving the previous config", { errors: result.errors.length });
    return false;
  }
  const before = gateway.catalog;
  await gateway.reload(result.catalog);
  // The store and the tracer are opened once: comparing is safe (nothing here is printed).
  const same = (c: typeof before) => JSON.stringify([c.state, c.tracing ?? null]);
  if (same(before) !== same(result.catalog)) {
    logger.warn("state: and tracing: take effect at the next start; this reload keeps the running ones");
  }
  logger.info("config reloaded", {
    toolsets: result.catalog.toolsets.length,
    sessions: gateway.sessionCount,
  });
  return true;
}

/** Reloads on SIGHUP and, with `watchFiles`, on a change to any config file (debounced). Returns a stop function. */
export function reloadOn(
  gateway: Pick<Front, "catalog" | "reload" | "sessionCount">,
  files: readonly string[],
  logger: Logger,
  watchFiles: boolean,
): () => void {
  let timer: NodeJS.Timeout | undefined;
  let running = Promise.resolve(true);
  const trigger = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      running = running
        .then(() => reloadConfig(gateway, files, logger))
        .catch((err: Error) => {
          logger.error("reload failed; still serving the previous config", { error: err.message });
          return false;
        });
    }, 150);
  };
  process.on("SIGHUP", trigger);
  const watchers: FSWatcher[] = [];
  if (watchFiles) {
    // Watch the folders: editors replace a file rather than write it, which a watch on the file misses.
    const byDir = new Map<string, Set<string>>();
    for (const f of files) {
      const dir = dirname(resolve(f));
      byDir.set(dir, (byDir.get(dir) ?? new Set()).add(basename(f)));
    }
    for (const [dir, names] of byDir) {
      watchers.push(
        watch(dir, (_event, name) => {
          if (name && names.has(String(name))) trigger();
        }),
      );
    }
  }
  return () => {
    clearTimeout(timer);
    process.off("SIGHUP", trigger);
    for (const w of watchers) w.close();
  };
}
