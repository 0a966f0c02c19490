/** @module Files → frozen Catalog in one call: load, validate, interpolate, compile. */

import { type Env, redact } from "../config/env.js";
import type { ConfigError } from "../config/errors.js";
import { type LoadResult, loadFiles, loadTexts, type TextFile } from "../config/load.js";
import { compile } from "./compile.js";
import type { Catalog } from "./types.js";

export type CatalogResult = { ok: true; catalog: Catalog } | { ok: false; errors: readonly ConfigError[] };

export function loadCatalog(paths: readonly string[], env: Env = process.env): CatalogResult {
  return compileLoaded(loadFiles(paths, env), paths, env);
}

/** Pure variant for tests and embedding: texts instead of paths. */
export function compileTexts(texts: readonly TextFile[], env: Env = {}): CatalogResult {
  return compileLoaded(
    loadTexts(texts, env),
    texts.map((t) => t.file),
    env,
  );
}

/**
 * Compiles what loaded, even when some of it failed (the failed parts are skipped, not reported twice), so
 * one run reports every error: in file order, then by position; any that quotes a value from the environment
 * shows its `${VAR}` instead.
 */
function compileLoaded(loaded: LoadResult, order: readonly string[], env: Env): CatalogResult {
  const complete = loaded.files.length === order.length;
  const result = compile(loaded.files, { env, complete });
  if (result.ok && loaded.ok) return result;
  const secrets = new Map(loaded.files.flatMap((f) => [...f.secrets]));
  const seen = new Set<string>();
  const errors = [...loaded.errors, ...(result.ok ? [] : result.errors)]
    .map((e) => ({
      ...e,
      message: redact(e.message, secrets),
      ...(e.hint ? { hint: redact(e.hint, secrets) } : {}),
    }))
    .filter((e) => {
      const id = `${e.file}:${e.line}:${e.col}:${e.message}`;
      return !seen.has(id) && !!seen.add(id);
    });
  const rank = (file: string) => order.indexOf(file);
  errors.sort((a, b) => rank(a.file) - rank(b.file) || a.line - b.line || a.col - b.col);
  return { ok: false, errors };
}
