/** @module The `state:` and `tracing:` sections compiled into their plans, with `FILE:LINE:COL` errors. */
import type { Env } from "../config/env.js";
import type { ConfigError } from "../config/errors.js";
import type { LoadedFile } from "../config/load.js";
import { SettingError } from "../config/setting-error.js";
import type { Path } from "../config/source.js";
import { planState, type StateConfig, type StatePlan } from "../state/config.js";
import { planTracing, type TracingPlan } from "../tracing/config.js";
import type { TracingConfig } from "../tracing/types.js";

type Section = "state" | "tracing";

/** Each key of a section from the first file that sets it (as `state.max_session_bytes` always was). */
function merged<T extends object>(files: readonly LoadedFile[], section: Section): T | undefined {
  let out: Record<string, unknown> | undefined;
  for (const f of files) {
    const part = f.config[section] as Record<string, unknown> | undefined;
    if (!part) continue;
    out ??= {};
    for (const [k, v] of Object.entries(part)) if (!(k in out) && v !== undefined) out[k] = v;
  }
  return out as T | undefined;
}

/**
 * A setting error at the key it names (`state.store`) in the first file that sets it; an environment
 * variable's (TOOLPACKS_STATE_STORE) at the section, or the top of the first file.
 */
function positioned(files: readonly LoadedFile[], section: Section, e: SettingError): ConfigError {
  const path: Path = e.path.split(".");
  const setting = path[0] === section ? files.find((f) => has(f.config, path)) : undefined;
  if (setting) return setting.source.error(path, `${e.path}: ${e.detail}`, e.hint);
  const where = files.find((f) => f.config[section]) ?? files[0]!;
  const at: Path = where.config[section] ? [section] : [];
  return where.source.error(at, `${e.path}: ${e.detail}`, e.hint, at.length > 0);
}

function has(value: unknown, path: Path): boolean {
  let v = value;
  for (const p of path) {
    if (!v || typeof v !== "object") return false;
    v = (v as Record<string, unknown>)[String(p)];
  }
  return v !== undefined;
}

/** The state store plan: memory unless `state.store` or TOOLPACKS_STATE_STORE names Redis. */
export function statePlanOf(
  files: readonly LoadedFile[],
  name: string,
  env: Env,
  errors: ConfigError[],
): StatePlan {
  try {
    return planState(merged<StateConfig>(files, "state"), name, env);
  } catch (e) {
    if (!(e instanceof SettingError) || !files.length) throw e;
    errors.push(positioned(files, "state", e));
    return planState(undefined, name, {});
  }
}

/** The tracing plan, or undefined when tracing is off (no `tracing.endpoint`, no OTLP endpoint variable). */
export function tracingPlanOf(
  files: readonly LoadedFile[],
  env: Env,
  errors: ConfigError[],
): TracingPlan | undefined {
  try {
    return planTracing(merged<TracingConfig>(files, "tracing"), env);
  } catch (e) {
    if (!(e instanceof SettingError) || !files.length) throw e;
    errors.push(positioned(files, "tracing", e));
    return undefined;
  }
}
