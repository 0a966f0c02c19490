/** @module Files → frozen Catalog in one call: load, validate, interpolate, compile. */

import { type Env, redact } from "../config/env.js";
import type { ConfigError } from "../config/errors.js";
import { type LoadedFile, loadFiles, loadTexts, type TextFile } from "../config/load.js";
import { compile } from "./compile.js";
import type { Catalog } from "./types.js";

export type CatalogResult = { ok: true; catalog: Catalog } | { ok: false; errors: readonly ConfigError[] };

export function loadCatalog(paths: readonly string[], env: Env = process.env): CatalogResult {
  const loaded = loadFiles(paths, env);
  return loaded.ok ? compileRedacted(loaded.files) : loaded;
}

/** Compiles; any error that quotes a value from the environment shows its `${VAR}` instead. */
function compileRedacted(files: readonly LoadedFile[]): CatalogResult {
  const result = compile(files);
  if (result.ok) return result;
  const secrets = new Map(files.flatMap((f) => [...f.secrets]));
  if (!secrets.size) return result;
  return {
    ok: false,
    errors: result.errors.map((e) => ({
      ...e,
      message: redact(e.message, secrets),
      ...(e.hint ? { hint: redact(e.hint, secrets) } : {}),
    })),
  };
}

/** Pure variant for tests and embedding: texts instead of paths. */
export function compileTexts(texts: readonly TextFile[], env: Env = {}): CatalogResult {
  const loaded = loadTexts(texts, env);
  return loaded.ok ? compileRedacted(loaded.files) : loaded;
}
