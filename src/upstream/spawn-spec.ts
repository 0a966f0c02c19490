/** @module How a stdio upstream is started: command lookup, environment, per-instance values. Light: no SDK import. */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { stdioEnv } from "../catalog/stdio-env.js";
import type { Upstream } from "../catalog/types.js";
import { fillInstance, type InstanceValues } from "../config/instance-vars.js";
import type { Variant } from "./instance.js";
import type { SpawnSpec } from "./stdio-transport.js";

export type { Variant } from "./instance.js";

/** A bare command is looked up in node_modules/.bin of the upstream's folder first, then on PATH. */
function resolveCommand(command: string, cwd: string): string {
  if (command.includes("/")) return command;
  for (const dir of [cwd, process.cwd()]) {
    const candidate = join(dir, "node_modules", ".bin", command);
    if (existsSync(candidate)) return candidate;
  }
  return command;
}

/**
 * The process of one instance: the minimal inherited environment, `inherit_env` and `env` (never the proxy's
 * own settings or another upstream's credentials), the variant's credentials (`header_env`), and
 * `${instance.dir}`/`${instance.id}` filled in.
 */
export function spawnSpecOf(
  up: Upstream,
  variant: Variant = {},
  instance?: InstanceValues,
  from: NodeJS.ProcessEnv = process.env,
): SpawnSpec {
  const fill = (s: string) => (instance ? fillInstance(s, instance) : s);
  const env = stdioEnv(up, from);
  for (const [k, v] of Object.entries(env)) env[k] = fill(v);
  const cwd = fill(up.cwd);
  return {
    command: resolveCommand(up.command!, cwd),
    args: up.args.map(fill),
    env: { ...env, ...variant.env },
    cwd,
  };
}
