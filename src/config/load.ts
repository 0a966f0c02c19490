/** @module Reads config files: YAML with positions, schema validation, `${VAR}` interpolation. */
import { readFileSync } from "node:fs";
import { type Env, interpolate } from "./env.js";
import type { ConfigError } from "./errors.js";
import { validateSource } from "./schema.js";
import { parseSource, type Source } from "./source.js";
import type { PacksFile } from "./types.js";

/** One file, validated: `config` has variables resolved, `raw` keeps `${VAR}` as written (for display). */
export interface LoadedFile {
  readonly source: Source;
  readonly config: PacksFile;
  readonly raw: PacksFile;
  /** Values taken from the environment → their `${VAR}` reference: never to be printed. */
  readonly secrets: ReadonlyMap<string, string>;
}

export type LoadResult = { ok: true; files: LoadedFile[] } | { ok: false; errors: ConfigError[] };

export interface TextFile {
  readonly file: string;
  readonly text: string;
}

/** Pure: parse and validate texts. Every error of every file is collected. */
export function loadTexts(texts: readonly TextFile[], env: Env): LoadResult {
  const errors: ConfigError[] = [];
  const files: LoadedFile[] = [];
  for (const { file, text } of texts) {
    const parsed = parseSource(file, text);
    if (parsed.errors.length) {
      errors.push(...parsed.errors);
      continue;
    }
    const { source } = parsed;
    if (source.data === null || source.data === undefined) {
      files.push({ source, config: {}, raw: {}, secrets: new Map() });
      continue;
    }
    const invalid = validateSource(source);
    if (invalid.length) {
      errors.push(...invalid);
      continue;
    }
    const resolved = interpolate(source, env);
    errors.push(...resolved.errors);
    files.push({
      source,
      config: resolved.data as PacksFile,
      raw: source.data as PacksFile,
      secrets: resolved.secrets,
    });
  }
  return errors.length ? { ok: false, errors } : { ok: true, files };
}

/** Reads the files from disk; an unreadable file is an error at 1:1, not a crash. */
export function loadFiles(paths: readonly string[], env: Env): LoadResult {
  const texts: TextFile[] = [];
  const errors: ConfigError[] = [];
  for (const file of paths) {
    try {
      texts.push({ file, text: readFileSync(file, "utf8") });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const why =
        code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a directory" : String(code ?? err);
      errors.push({ file, line: 1, col: 1, message: `cannot read config: ${why}` });
    }
  }
  const loaded = loadTexts(texts, env);
  if (errors.length) return { ok: false, errors: [...errors, ...(loaded.ok ? [] : loaded.errors)] };
  return loaded;
}
