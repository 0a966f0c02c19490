/** @module `${instance.dir}` and `${instance.id}`: where a config may use them, and how spawn time fills them. */
import type { ConfigError } from "./errors.js";
import type { Path, Source } from "./source.js";

/** What the serving core knows only when it starts one instance: its private directory and its digest. */
export interface InstanceValues {
  readonly dir: string;
  readonly id: string;
}

const NAMES: readonly string[] = ["dir", "id"];
const INSTANCE_REF = /\$\{instance\.(dir|id)\}/g;
const ALLOWED =
  "instance variables are allowed only in env values, args and cwd of a stdio upstream with isolation: per-session or header_env";

/** Replaces `${instance.dir}` and `${instance.id}` in one compiled string (env value, arg or cwd). */
export function fillInstance(text: string, values: InstanceValues): string {
  return text.replace(INSTANCE_REF, (_m, name: "dir" | "id") => values[name]);
}

/** True when an upstream's command line, environment or folder differs per instance. */
export function usesInstanceVars(spec: {
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
}): boolean {
  const has = (s: string) => s.search(INSTANCE_REF) >= 0;
  return has(spec.cwd) || spec.args.some(has) || Object.values(spec.env).some(has);
}

/**
 * The problem with `${instance.<name>}` at `path` of a file, or undefined when it may stand there.
 * `settled(upstream)` is false for an upstream whose spec has other errors: its kind is unknown, so no verdict.
 */
export function instanceRefProblem(
  source: Source,
  path: Path,
  name: string,
  settled: (upstream: string) => boolean,
): ConfigError | undefined {
  const ref = `\${instance.${name}}`;
  if (!NAMES.includes(name)) {
    return source.error(
      path,
      `unknown instance variable ${ref} in ${path.join(".")}`,
      "use ${instance.dir} or ${instance.id}",
    );
  }
  const [top, upstream, field] = path;
  const inField =
    top === "upstreams" &&
    typeof upstream === "string" &&
    ((field === "env" && path.length === 4) ||
      (field === "args" && path.length === 4) ||
      (field === "cwd" && path.length === 3));
  if (!inField) return source.error(path, `${ref} cannot be used in ${path.join(".")}`, ALLOWED);
  if (!settled(upstream)) return undefined;
  const spec = (source.data as { upstreams: Record<string, Record<string, unknown>> }).upstreams[upstream]!;
  const perInstance =
    spec.isolation === "per-session" ||
    (spec.header_env !== null &&
      typeof spec.header_env === "object" &&
      Object.keys(spec.header_env).length > 0);
  if (typeof spec.command === "string" && spec.url === undefined && perInstance) return undefined;
  return source.error(
    path,
    `${ref} in ${path.join(".")}: upstream "${upstream}" ${perInstance ? "is not a stdio upstream" : "runs one shared instance"}`,
    ALLOWED,
  );
}
