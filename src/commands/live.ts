/** @module `--live`: connect to the upstreams once, read what they list, always close them again. */
import type { Inventory, UpstreamState } from "../catalog/inventory.js";
import type { Catalog, Member } from "../catalog/types.js";
import { silentLogger } from "../log.js";
import type { UpstreamPool } from "../upstream/pool.js";
import { VERSION } from "../version.js";

/** A progress line on stderr, only when stderr is a terminal (never on stdout, never in a pipe or CI log). */
export function progress(line: string): void {
  if (process.stderr.isTTY) process.stderr.write(`${line}\n`);
}

export interface Live {
  readonly pool: UpstreamPool;
  /** Every upstream of the catalog, ready or unavailable with its reason. */
  readonly inventory: Inventory;
}

/**
 * Starts every upstream of the catalog (in parallel), runs `use` with their inventory, and closes every
 * upstream (and waits for its process) whatever happens, also on SIGINT/SIGTERM.
 */
export async function withLive<T>(catalog: Catalog, use: (live: Live) => Promise<T>): Promise<T> {
  // Loaded here: the commands that never connect start without the SDK.
  const [{ UpstreamPool }, { closeAgent }, { serveOAuth }] = await Promise.all([
    import("../upstream/pool.js"),
    import("../upstream/transport.js"),
    import("./serve-oauth.js"),
  ]);
  // Shared OAuth upstreams are read with the grant `toolpacks login` stored (when the key is set).
  const env = { served: false, host: "127.0.0.1", logger: silentLogger };
  const oauth = await serveOAuth(() => catalog, process.env, env).catch(() => undefined);
  const pool = new UpstreamPool(catalog, {
    clientName: "toolpacks",
    clientVersion: VERSION,
    logger: silentLogger,
    auth: oauth && ((ref, spec) => oauth.oauth.auth(ref, spec)),
  });
  const close = async () => {
    await pool.close();
    await closeAgent();
  };
  const onSignal = (signal: NodeJS.Signals) => {
    void close().then(() => process.exit(signal === "SIGINT" ? 130 : 143));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    const names = [...catalog.upstreams.keys()];
    progress(`connecting to ${names.length} upstream(s) and listing their tools…`);
    let done = 0;
    const states = await Promise.all(
      names.map(async (name) => {
        const state = (await pool.ensure([name])).get(name)!;
        done++;
        progress(
          `  [${done}/${names.length}] ${name}: ${
            state.status === "ready" ? `${state.tools.length} tool(s)` : `unavailable: ${state.reason}`
          }`,
        );
        return [name, state] as const;
      }),
    );
    return await use({ pool, inventory: new Map<string, UpstreamState>(states) });
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await close();
  }
}

/** The keys a member is matched against on a ready upstream: tool or prompt names, resource URIs and templates. */
export function keysOf(state: UpstreamState, kind: Member["kind"]): string[] {
  if (state.status !== "ready") return [];
  if (kind === "tool") return state.tools.map((t) => t.name);
  if (kind === "prompt") return state.prompts.map((p) => p.name);
  return [...state.resources.map((r) => r.uri), ...state.templates.map((t) => t.uriTemplate)];
}

/** Writes the result to stdout, waits until it is flushed, and exits with `code` (stray handles cannot hold the process). */
export function finish(text: string, code: number): Promise<never> {
  return new Promise<never>(() => {
    process.stdout.write(text, () => process.exit(code));
  });
}
