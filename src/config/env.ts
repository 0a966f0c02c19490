/** @module `${VAR}` and `${VAR:-default}` in string values, taken from the environment. */
import type { ConfigError } from "./errors.js";
import type { Path, Source } from "./source.js";

const REF = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export type Env = Readonly<Record<string, string | undefined>>;

/** Returns a deep copy of `data` with every reference replaced; a missing variable is an error at its node. */
export function interpolate(
  source: Source,
  env: Env,
): { data: unknown; errors: ConfigError[]; secrets: Map<string, string> } {
  const errors: ConfigError[] = [];
  /** Every value taken from the environment, with the reference that produced it (for redaction). */
  const secrets = new Map<string, string>();
  const walk = (value: unknown, path: Path): unknown => {
    if (typeof value === "string") return substitute(value, path);
    if (Array.isArray(value)) return value.map((v, i) => walk(v, [...path, i]));
    if (value && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, [...path, k])]));
    }
    return value;
  };
  const substitute = (text: string, path: Path): string => {
    if (!text.includes("$")) return text;
    return text.replace(REF, (match, name: string | undefined, fallback: string | undefined) => {
      if (match === "$$") return "$";
      const v = env[name!];
      if (v !== undefined && v !== "") {
        if (v.length >= 4) secrets.set(v, `\${${name}}`);
        return v;
      }
      if (fallback !== undefined) return fallback;
      if (v === "") return v;
      errors.push(
        source.error(
          path,
          `environment variable ${name} is not set (used in ${path.join(".")})`,
          `set ${name}, or write \${${name}:-default}`,
        ),
      );
      return "";
    });
  };
  return { data: walk(source.data, []), errors, secrets };
}

/** True when a string refers to the environment: such values are never printed resolved. */
export function usesEnv(text: string): boolean {
  return /\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}/.test(text);
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
