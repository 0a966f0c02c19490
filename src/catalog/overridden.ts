/**
 * @module What a later declaration sets that the first one wins over (SPEC §2.4): a warning at each such key,
 * naming where the winning value is. Without it a later file's `always: true` is dropped without a word.
 */
import { dirname, resolve as resolvePath } from "node:path";
import { isDeepStrictEqual } from "node:util";
import type { LoadedFile } from "../config/load.js";
import type { Path } from "../config/source.js";
import { where } from "./where.js";

/** What the first declaration of a toolset decides (members are joined, `requires:` must agree). */
const TOOLSET_KEYS = ["title", "description", "instructions", "default", "always", "deferred", "capture"];
const TOOLSET_DEFAULTS: Readonly<Record<string, unknown>> = {
  description: "",
  default: true,
  always: false,
  deferred: false,
};
/** Sections whose every key is taken from the first file that sets it. */
const BY_KEY = ["limits", "state", "tracing", "search"];
/** `audit:` is taken whole from the first file that has it. */
const AUDIT_DEFAULTS: Readonly<Record<string, unknown>> = { arguments: false, subject: "plain" };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);

function valueAt(data: unknown, path: Path): unknown {
  let v = data;
  for (const p of path) v = isObj(v) ? v[String(p)] : undefined;
  return v;
}

/** A value as the file wrote it (`${VAR}` unresolved), short. */
function shown(value: unknown): string {
  const text =
    typeof value === "boolean" || typeof value === "number" ? String(value) : JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}

/** A path relative to its file's folder, as the compiler takes it. */
const inFolder = (file: LoadedFile, value: unknown) =>
  typeof value === "string" ? resolvePath(dirname(resolvePath(file.source.file)), value) : value;

const trimmed = (value: unknown) => (typeof value === "string" ? value.trim() : value);

interface Winner {
  readonly file: LoadedFile;
  /** Where the winning value is written: the key, or (when it is a default) the declaration. */
  readonly path: Path;
  /** The value in effect (a default when the winner does not set it). */
  readonly value: unknown;
  readonly set: boolean;
}

export function overriddenWarnings(files: readonly LoadedFile[]): string[] {
  const out: { rank: number[]; text: string }[] = [];
  const warn = (file: LoadedFile, path: Path, label: string, winner: Winner, by: string, hint: string) => {
    const pos = file.source.at(path, true);
    const here = where(pos, file.source.file);
    const at = where(winner.file.source.at(winner.path, true), winner.file.source.file);
    const was = winner.set
      ? shown(valueAt(winner.file.raw, winner.path))
      : winner.value === undefined
        ? "unset"
        : `${shown(winner.value)}, the default`;
    const key = label.split(": ").at(-1);
    out.push({
      rank: [files.indexOf(file), pos.line, pos.col],
      text: `${here}: warning: ${label}: ${shown(valueAt(file.raw, path))} is ignored: ${by} wins with ${key}: ${was} (at ${at}) (${hint})`,
    });
  };

  const firstToolset = new Map<string, LoadedFile>();
  for (const file of files) {
    for (const [name, spec] of Object.entries(file.config.toolsets ?? {})) {
      if (!isObj(spec)) continue;
      const first = firstToolset.get(name);
      if (!first) {
        firstToolset.set(name, file);
        continue;
      }
      const winning = first.config.toolsets![name] as Obj;
      for (const key of TOOLSET_KEYS) {
        if (spec[key] === undefined) continue;
        const set = winning[key] !== undefined;
        const value = set ? winning[key] : key === "title" ? name : TOOLSET_DEFAULTS[key];
        if (isDeepStrictEqual(trimmed(spec[key]), trimmed(value))) continue;
        const path = set ? ["toolsets", name, key] : ["toolsets", name];
        warn(
          file,
          ["toolsets", name, key],
          `toolset ${name}: ${key}`,
          { file: first, path, value, set },
          "its first declaration",
          `the first declaration describes a toolset: set ${key} there, or remove it here`,
        );
      }
    }
  }

  /** Each key the first file that sets it decides: a later file's different value is ignored. */
  const firstFileWins = (path: Path, compare: (file: LoadedFile, v: unknown) => unknown = (_f, v) => v) => {
    let winner: Winner | undefined;
    for (const file of files) {
      const v = valueAt(file.config, path);
      if (v === undefined) continue;
      if (!winner) winner = { file, path, value: v, set: true };
      else if (!isDeepStrictEqual(compare(file, v), compare(winner.file, winner.value)))
        warn(file, path, path.join("."), winner, "the first file that sets it", "set it in one file");
    }
  };
  firstFileWins(["name"]);
  firstFileWins(["state_dir"], inFolder);
  for (const section of BY_KEY) {
    const keys = new Set(files.flatMap((f) => Object.keys((valueAt(f.config, [section]) as Obj) ?? {})));
    for (const key of keys) firstFileWins([section, key]);
  }

  const auditFile = files.find((f) => f.config.audit);
  for (const file of files) {
    if (!auditFile || file === auditFile || !file.config.audit) continue;
    const winning = auditFile.config.audit as Obj;
    for (const [key, v] of Object.entries(file.config.audit as Obj)) {
      if (v === undefined) continue;
      const set = winning[key] !== undefined;
      const value = set ? winning[key] : AUDIT_DEFAULTS[key];
      const same =
        key === "file" && set
          ? inFolder(file, v) === inFolder(auditFile, value)
          : isDeepStrictEqual(v, value);
      if (same) continue;
      warn(
        file,
        ["audit", key],
        `audit.${key}`,
        { file: auditFile, path: set ? ["audit", key] : ["audit"], value, set },
        "audit: of the first file that has it",
        "write audit: in one file",
      );
    }
  }
  // In file order, then by position, as errors are.
  const order = (a: number[], b: number[]) => a[0]! - b[0]! || a[1]! - b[1]! || a[2]! - b[2]!;
  return out.sort((a, b) => order(a.rank, b.rank)).map((w) => w.text);
}
