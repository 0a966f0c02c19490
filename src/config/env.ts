/** @module `${VAR}` and `${VAR:-default}` in string values, taken from the environment. */
import type { ConfigError } from "./errors.js";
import type { Path, Source } from "./source.js";

/** `$$`, `${instance.x}` (kept for spawn time), or `${VAR}` / `${VAR:-default}`. */
const REF = /\$\$|\$\{instance\.([^}]*)\}|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export type Env = Readonly<Record<string, string | undefined>>;

/** A reference found in a string: an environment variable, or an instance variable (`${instance.dir}`). */
type Ref =
  | { readonly kind: "var"; readonly name: string }
  | { readonly kind: "instance"; readonly name: string };

/** Says whether a reference may stand at `path`: an error when it may not (it is then left as written). */
export type RefPolicy = (path: Path, ref: Ref) => ConfigError | undefined;

export interface InterpolateOptions {
  readonly policy?: RefPolicy;
  /** Strings left exactly as written, unchecked (they already failed the schema). */
  readonly skip?: (path: Path) => boolean;
  /** Variables whose values are not secrets (`public_env`): left out of the redaction map. */
  readonly publicEnv?: ReadonlySet<string>;
}

export interface Interpolated {
  readonly data: unknown;
  readonly errors: ConfigError[];
  /** Every value taken from the environment, with the reference that produced it (for redaction). */
  readonly secrets: Map<string, string>;
  /** Where a reference failed: the compiler leaves those parts alone rather than report their consequences. */
  readonly failed: Path[];
}

/** Returns a deep copy of `data` with every reference replaced; a missing variable is an error at its node. */
export function interpolate(source: Source, env: Env, options: InterpolateOptions = {}): Interpolated {
  const errors: ConfigError[] = [];
  const secrets = new Map<string, string>();
  const failed: Path[] = [];
  const walk = (value: unknown, path: Path): unknown => {
    if (typeof value === "string") return substitute(value, path);
    if (Array.isArray(value)) return value.map((v, i) => walk(v, [...path, i]));
    if (value && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, [...path, k])]));
    }
    return value;
  };
  const refuse = (path: Path, error: ConfigError) => {
    errors.push(error);
    failed.push(path);
  };
  const substitute = (text: string, path: Path): string => {
    if (!text.includes("$") || options.skip?.(path)) return text;
    return text.replace(
      REF,
      (match, instance: string | undefined, name: string | undefined, fallback: string | undefined) => {
        if (match === "$$") return "$";
        const ref: Ref =
          instance !== undefined ? { kind: "instance", name: instance } : { kind: "var", name: name! };
        const refused = options.policy?.(path, ref);
        if (refused) refuse(path, refused);
        if (refused || ref.kind === "instance") return match;
        const v = env[ref.name];
        if (v !== undefined && v !== "") {
          if (v.length >= 4 && !options.publicEnv?.has(ref.name)) secrets.set(v, `\${${ref.name}}`);
          return v;
        }
        if (fallback !== undefined) return fallback;
        if (v === "") return v;
        refuse(
          path,
          source.error(
            path,
            `environment variable ${ref.name} is not set (used in ${path.join(".")})`,
            `set ${ref.name}, or write \${${ref.name}:-default}`,
          ),
        );
        return "";
      },
    );
  };
  return { data: walk(source.data, []), errors, secrets, failed };
}

/** The environment variables a value refers to (`$${VAR}` is text, not a reference). */
export function referencedVars(value: unknown, into = new Set<string>()): Set<string> {
  if (typeof value === "string") {
    for (const m of value.matchAll(REF)) if (m[2] !== undefined) into.add(m[2]);
  } else if (Array.isArray(value)) {
    for (const v of value) referencedVars(v, into);
  } else if (value && typeof value === "object") {
    for (const v of Object.values(value)) referencedVars(v, into);
  }
  return into;
}

/** Replaces every value that came from the environment with its `${VAR}` reference. */
export function redact(text: string, secrets: ReadonlyMap<string, string>): string {
  let out = text;
  // Longest first, so that a value containing another is replaced whole.
  for (const [value, ref] of [...secrets].sort((a, b) => b[0].length - a[0].length)) {
    if (out.includes(value)) out = out.split(value).join(ref);
  }
  return out;
}
