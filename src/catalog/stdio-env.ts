/** @module A stdio upstream's environment: the minimal inherited set, `inherit_env`, and what may never be inherited. */
import { type Env, referencedVars } from "../config/env.js";
import type { ConfigError } from "../config/errors.js";
import type { LoadedFile } from "../config/load.js";
import type { Upstream } from "./types.js";
import { where } from "./where.js";

/** What every stdio upstream inherits (what the SDK's StdioClientTransport passes by default, plus locale). */
const MINIMAL_ENV: readonly string[] = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "TZ"];

/** The proxy's own settings: never handed to an upstream. */
const OWN = /^TOOLPACKS_/;

/**
 * The environment a stdio upstream starts with: the minimal set and `inherit_env` (those set in `processEnv`;
 * never `TOOLPACKS_*`), then its `env:`. Credentials from `header_env` and `${instance.…}` are the caller's.
 */
export function stdioEnv(up: Pick<Upstream, "inheritEnv" | "env">, processEnv: Env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of [...MINIMAL_ENV, ...up.inheritEnv]) {
    const value = processEnv[name];
    if (value !== undefined && !OWN.test(name)) env[name] = value;
  }
  return { ...env, ...up.env };
}

interface Taker {
  readonly upstream?: string;
  readonly where: string;
}

/**
 * `inherit_env` may not name a `TOOLPACKS_*` variable, nor one that another upstream (or `auth:`) takes with
 * `${VAR}`: that value belongs to someone else. Upstreams that already failed are left out.
 */
export function checkInheritEnv(files: readonly LoadedFile[]): ConfigError[] {
  const takers = new Map<string, Taker[]>();
  const take = (names: Set<string>, taker: Taker) => {
    for (const n of names) takers.set(n, [...(takers.get(n) ?? []), taker]);
  };
  for (const { source, raw } of files) {
    const here = (path: (string | number)[]) => where(source.at(path, true), source.file);
    take(referencedVars(raw.auth ?? {}), { where: here(["auth"]) });
    for (const [name, spec] of Object.entries(raw.upstreams ?? {})) {
      take(referencedVars(spec), { upstream: name, where: here(["upstreams", name]) });
    }
  }
  const errors: ConfigError[] = [];
  for (const { source, config, broken } of files) {
    for (const [name, spec] of Object.entries(config.upstreams ?? {})) {
      if (broken.within(["upstreams", name]) || spec.command === undefined || spec.url !== undefined)
        continue;
      (spec.inherit_env ?? []).forEach((v, i) => {
        const path = ["upstreams", name, "inherit_env", i];
        const other = (takers.get(v) ?? []).filter((t) => t.upstream !== name);
        const own = (takers.get(v) ?? []).some((t) => t.upstream === name);
        if (OWN.test(v)) {
          errors.push(
            source.error(
              path,
              `inherit_env lists ${v}: toolpacks' own TOOLPACKS_* settings are never passed to an upstream`,
              "remove it; give the server what it needs under env:",
            ),
          );
        } else if (other.some((t) => t.upstream === undefined)) {
          const at = other.find((t) => t.upstream === undefined)!.where;
          errors.push(
            source.error(
              path,
              `inherit_env lists ${v}, the proxy's own bearer token or secret (auth:, at ${at})`,
              "remove it",
            ),
          );
        } else if (other.length && !own) {
          errors.push(
            source.error(
              path,
              `inherit_env lists ${v}, which upstream "${other[0]!.upstream}" takes from the environment (at ${other[0]!.where})`,
              `an upstream inherits no other upstream's variables; if this one needs it too, write env: { ${v}: "\${${v}}" }`,
            ),
          );
        }
      });
    }
  }
  return errors;
}
