/** @module How a stdio upstream is started: command lookup and environment. Light: no SDK import. */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Upstream } from "../catalog/types.js";
import type { SpawnSpec } from "./stdio-transport.js";

/** Per-variant additions: forwarded credential headers (HTTP) or environment (stdio). */
export interface Variant {
  readonly headers?: Readonly<Record<string, string>>;
  readonly env?: Readonly<Record<string, string>>;
}

/** A bare command is looked up in node_modules/.bin of the upstream's folder first, then on PATH. */
export function resolveCommand(command: string, cwd: string): string {
  if (command.includes("/")) return command;
  for (const dir of [cwd, process.cwd()]) {
    const candidate = join(dir, "node_modules", ".bin", command);
    if (existsSync(candidate)) return candidate;
  }
  return command;
}

/** The proxy's environment, then the upstream's `env`, then the variant's (credentials from header_env). */
export function spawnSpecOf(up: Upstream, variant: Variant = {}): SpawnSpec {
  return {
    command: resolveCommand(up.command!, up.cwd),
    args: up.args,
    env: { ...(process.env as Record<string, string>), ...up.env, ...variant.env },
    cwd: up.cwd,
  };
}
