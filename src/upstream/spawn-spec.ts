/** @module How a stdio upstream is started: command lookup, environment, per-instance values. Light: no SDK import. */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Upstream } from "../catalog/types.js";
import type { Variant } from "./instance.js";
import { fillInstanceValues, type InstanceValues } from "./instance-dirs.js";
import type { SpawnSpec } from "./stdio-transport.js";

export type { Variant } from "./instance.js";

/**
 * What a stdio upstream inherits from the proxy's environment, as the SDK's own stdio transport does, plus
 * the locale and time zone: never the proxy's tokens, session secret or another upstream's credentials.
 */
export const INHERITED_ENV = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "TZ"] as const;

/** A bare command is looked up in node_modules/.bin of the upstream's folder first, then on PATH. */
export function resolveCommand(command: string, cwd: string): string {
  if (command.includes("/")) return command;
  for (const dir of [cwd, process.cwd()]) {
    const candidate = join(dir, "node_modules", ".bin", command);
    if (existsSync(candidate)) return candidate;
  }
  return command;
}

/** The environment a stdio upstream starts with: the inherited few, its `inherit_env`, its `env`, the variant's. */
export function upstreamEnv(
  up: Upstream,
  variant: Variant = {},
  instance?: InstanceValues,
  from: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  const inherit = (up as { inheritEnv?: readonly string[] }).inheritEnv ?? [];
  for (const name of [...INHERITED_ENV, ...inherit]) {
    const v = from[name];
    if (v !== undefined && !name.startsWith("TOOLPACKS_")) env[name] = v;
  }
  for (const [k, v] of Object.entries(up.env)) env[k] = instance ? fillInstanceValues(v, instance) : v;
  return { ...env, ...variant.env };
}

export function spawnSpecOf(up: Upstream, variant: Variant = {}, instance?: InstanceValues): SpawnSpec {
  const fill = (s: string) => (instance ? fillInstanceValues(s, instance) : s);
  const cwd = fill(up.cwd);
  return {
    command: resolveCommand(up.command!, cwd),
    args: up.args.map(fill),
    env: upstreamEnv(up, variant, instance),
    cwd,
  };
}
