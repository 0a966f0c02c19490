/** @module Reads config files: YAML with positions, schema validation, `${VAR}` interpolation. */
import { readFileSync } from "node:fs";
import { isAbsolute } from "node:path";
import { type Broken, brokenOf, NOTHING_BROKEN, prune } from "./broken.js";
import { type Env, interpolate, type RefPolicy } from "./env.js";
import type { ConfigError } from "./errors.js";
import { instanceRefProblem } from "./instance-vars.js";
import { validateSource } from "./schema.js";
import { parseSource, type Source } from "./source.js";
import { publicEnvOf, textFieldProblem } from "./text-fields.js";
import type { PacksFile } from "./types.js";

/** One file, read: `config` has variables resolved, `raw` keeps `${VAR}` as written (for display). */
export interface LoadedFile {
  readonly source: Source;
  readonly config: PacksFile;
  readonly raw: PacksFile;
  /** Values taken from the environment → their `${VAR}` reference: never to be printed. */
  readonly secrets: ReadonlyMap<string, string>;
  /** What failed the schema: the compiler skips it (a failed upstream still declares its name). */
  readonly broken: Broken;
  /** Where a `${…}` reference failed (its value is empty or as written): no check that would only repeat it. */
  readonly unresolved: Broken;
}

/**
 * Every error of every file, and every file that parsed. A YAML syntax error stops its own file only;
 * a schema or variable error leaves the rest of the file to the compiler, with the failed parts marked.
 */
export interface LoadResult {
  readonly ok: boolean;
  readonly files: LoadedFile[];
  readonly errors: ConfigError[];
}

export interface TextFile {
  readonly file: string;
  readonly text: string;
}

/** Pure: parse, validate and interpolate texts. Every error of every file is collected. */
export function loadTexts(texts: readonly TextFile[], env: Env): LoadResult {
  const errors: ConfigError[] = [];
  const sources: Source[] = [];
  for (const { file, text } of texts) {
    const parsed = parseSource(file, text);
    errors.push(...parsed.errors);
    if (!parsed.errors.length) sources.push(parsed.source);
  }
  const publicEnv = publicEnvOf(sources.map((s) => s.data));
  const files = sources.map((source) => {
    if (source.data === null || source.data === undefined) {
      return {
        source,
        config: {},
        raw: {},
        secrets: new Map(),
        broken: NOTHING_BROKEN,
        unresolved: NOTHING_BROKEN,
      };
    }
    const findings = validateSource(source);
    const invalid = findings.map((f) => f.path);
    const broken = brokenOf(invalid);
    const policy: RefPolicy = (path, ref) =>
      ref.kind === "instance"
        ? instanceRefProblem(source, path, ref.name, (u) => !broken.within(["upstreams", u]))
        : textFieldProblem(source, path, ref.name, publicEnv);
    const resolved = interpolate(source, env, { policy, publicEnv, skip: (path) => broken.covers(path) });
    errors.push(...findings.map((f) => f.error), ...resolved.errors);
    return {
      source,
      config: prune(resolved.data, invalid) as PacksFile,
      raw: prune(structuredClone(source.data), invalid) as PacksFile,
      secrets: resolved.secrets,
      broken,
      unresolved: brokenOf(resolved.failed),
    };
  });
  return { ok: errors.length === 0, files, errors };
}

/**
 * Why a file could not be read, in words; a relative path that is not there names the working directory it
 * was looked for in (the command may run somewhere else than the user thinks).
 */
export function unreadable(file: string, err: unknown): { message: string; hint?: string } {
  const code = (err as NodeJS.ErrnoException).code;
  if ((code === "ENOENT" || code === "ENOTDIR") && !isAbsolute(file)) {
    return {
      message: `no such file in the working directory ${process.cwd()}`,
      hint: "a relative path is read from where toolpacks runs: give the path from there, or an absolute one",
    };
  }
  return {
    message: code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a directory" : String(code ?? err),
  };
}

/** Reads the files from disk; an unreadable file is an error at 1:1, not a crash. */
export function loadFiles(paths: readonly string[], env: Env): LoadResult {
  const texts: TextFile[] = [];
  const errors: ConfigError[] = [];
  for (const file of paths) {
    try {
      texts.push({ file, text: readFileSync(file, "utf8") });
    } catch (err) {
      const { message, hint } = unreadable(file, err);
      errors.push({
        file,
        line: 1,
        col: 1,
        message: `cannot read config: ${message}`,
        ...(hint ? { hint } : {}),
      });
    }
  }
  const loaded = loadTexts(texts, env);
  const all = [...errors, ...loaded.errors];
  return { ok: all.length === 0, files: loaded.files, errors: all };
}
