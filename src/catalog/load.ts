/** @module Files → frozen Catalog in one call: load, validate, interpolate, compile. */
import type { Env } from "../config/env.js";
import type { ConfigError } from "../config/errors.js";
import { loadFiles, loadTexts, type TextFile } from "../config/load.js";
import { compile } from "./compile.js";
import type { Catalog } from "./types.js";

export type CatalogResult = { ok: true; catalog: Catalog } | { ok: false; errors: readonly ConfigError[] };

export function loadCatalog(paths: readonly string[], env: Env = process.env): CatalogResult {
  const loaded = loadFiles(paths, env);
  return loaded.ok ? compile(loaded.files) : loaded;
}

/** Pure variant for tests and embedding: texts instead of paths. */
export function compileTexts(texts: readonly TextFile[], env: Env = {}): CatalogResult {
  const loaded = loadTexts(texts, env);
  return loaded.ok ? compile(loaded.files) : loaded;
}
