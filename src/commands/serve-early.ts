/**
 * @module `serve`'s first moment, before commander and the serving code load: the arguments prespawn needs are
 * read without commander, the config compiles, and the shared stdio upstreams of the selection are spawned, so
 * they boot while the rest of the proxy loads. Anything this reader does not know (help, a typo, a new option)
 * makes it step aside: commander then parses as always, and prespawns what this did not.
 */
import { loadCatalog } from "../catalog/load.js";
import type { Catalog } from "../catalog/types.js";
import { usesInstanceVars } from "../config/instance-vars.js";
import { select } from "../selection.js";
import { prespawn } from "../upstream/prespawn.js";
import { spawnSpecOf } from "../upstream/spawn-spec.js";

/** `serve`'s options that take a value, and its flags (test/unit/serve-early.test.ts keeps them in step). */
export const VALUE_OPTIONS: readonly string[] = [
  "--transport",
  "--host",
  "--port",
  "--path",
  "--toolsets",
  "--ignore-query-key",
  "--allowed-host",
  "--allowed-origin",
  "--session-secret",
  "--name",
  "--session-idle-timeout",
  "--cache-ttl",
  "--max-body-bytes",
  "--log-level",
  "--log-format",
  "--as",
  "--max-batch",
  "--max-sessions",
  "--max-sessions-per-client",
  "--public-url",
  "--trusted-proxy",
  "--ui-path",
];
export const FLAG_OPTIONS: readonly string[] = [
  "--stateless",
  "--watch",
  "--no-toolsets-tool",
  "--insecure-bind",
  "--ui",
  "--no-ui",
];

/** What decides which upstreams start at boot. */
export interface StartSelection {
  readonly stdio: boolean;
  /** `--toolsets`: over stdio the whole selection, over HTTP what a bare URL gets. */
  readonly toolsets?: string;
  readonly ignoreKeys: readonly string[];
}

export interface EarlyServe extends StartSelection {
  readonly files: readonly string[];
}

/** `serve`'s config files and start selection from its arguments (after `serve`), or undefined when unsure. */
export function readServeArgs(argv: readonly string[], env: NodeJS.ProcessEnv): EarlyServe | undefined {
  const files: string[] = [];
  const values = new Map<string, string[]>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      files.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith("-") || arg === "-") {
      files.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (eq < 0 && FLAG_OPTIONS.includes(name)) continue;
    if (!VALUE_OPTIONS.includes(name)) return undefined;
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) return undefined;
    values.set(name, [...(values.get(name) ?? []), value]);
  }
  const transport = values.get("--transport")?.at(-1) ?? env.TOOLPACKS_TRANSPORT ?? "streamable-http";
  if (!files.length || (transport !== "stdio" && transport !== "streamable-http")) return undefined;
  const toolsets = values.get("--toolsets")?.at(-1) ?? env.TOOLPACKS_TOOLSETS;
  return {
    files,
    stdio: transport === "stdio",
    ...(toolsets !== undefined ? { toolsets } : {}),
    ignoreKeys: values.get("--ignore-query-key") ?? [],
  };
}

/**
 * Compiles the config and spawns its start selection's upstreams; the catalog, for `serve` to use when its
 * files are the same. Nothing is printed: a config with errors is compiled again, and reported, by `serve`.
 */
export function startEarly(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): { files: readonly string[]; catalog: Catalog } | undefined {
  const args = readServeArgs(argv, env);
  if (!args) return undefined;
  const loaded = loadCatalog([...args.files]);
  if (!loaded.ok) return undefined;
  prespawnSelection(loaded.catalog, args);
  return { files: args.files, catalog: loaded.catalog };
}

/**
 * Spawns the shared stdio upstreams of what a bare URL (or, over stdio, the whole selection) will use. Calling it
 * again spawns only what is not spawned yet.
 */
export function prespawnSelection(catalog: Catalog, start: StartSelection): void {
  const picked = select(catalog, start.stdio ? (start.toolsets ?? "") : "", {
    ignoreKeys: start.ignoreKeys,
    ...(!start.stdio && start.toolsets !== undefined ? { defaultSelection: start.toolsets } : {}),
  });
  if (!picked.ok) return;
  for (const name of new Set(
    picked.selection.active.flatMap((t) => catalog.toolset.get(t)?.upstreams ?? []),
  )) {
    const up = catalog.upstreams.get(name);
    if (up?.transport !== "stdio" || up.isolation !== "shared" || usesInstanceVars(up)) continue;
    // protocol auto: its era is asked of this process once its connection adopts it (probe-stdio.ts).
    prespawn(name, spawnSpecOf(up));
  }
}
