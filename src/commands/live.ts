/** @module `--live`: connect to the upstreams once, read what they list, always close them again. */
import type { Inventory, UpstreamState } from "../catalog/inventory.js";
import type { Catalog, Member, Upstream } from "../catalog/types.js";
import { redact } from "../config/env.js";
import { silentLogger } from "../log.js";
import { upstreamCapabilities } from "../upstream/capabilities.js";
import { type InstanceRef, sessionRef, sharedRef } from "../upstream/instance.js";
import type { UpstreamPool } from "../upstream/pool.js";
import { VERSION } from "../version.js";
import { LiveProgress } from "./progress.js";

/**
 * The instance `--live` reads an upstream through: the kind a session without credentials gets (its own for
 * `isolation: per-session`, else the shared one), so it declares what that session's instance would
 * (`upstreamCapabilities`) and is shown the tools that session would be shown.
 */
function liveRef(spec: Upstream): InstanceRef {
  return spec.isolation === "per-session" ? sessionRef(spec.name, "toolpacks --live") : sharedRef(spec.name);
}

/** Client capabilities an upstream may list tools by (server-everything's get-roots-list needs roots). */
const LISTING_CAPABILITIES = ["roots", "sampling", "elicitation"] as const;

/** The capabilities `--live` (and a session's instance) does not declare to this upstream. */
export function undeclaredCapabilities(spec: Upstream): string[] {
  const declared = upstreamCapabilities(spec, liveRef(spec).kind === "session");
  return LISTING_CAPABILITIES.filter((c) => declared[c] === undefined);
}

export interface Live {
  readonly pool: UpstreamPool;
  /** Every upstream of the catalog, ready or unavailable with its reason. */
  readonly inventory: Inventory;
  /** Lists an upstream again, through the instance it was read from. */
  refresh(upstream: string): Promise<UpstreamState>;
  /** What an upstream lists to a client that declares every capability a session may have (roots too). */
  probe(upstream: string): Promise<UpstreamState>;
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
  // A reason may quote a child's stderr, and so a value taken from the environment.
  const shown = (state: UpstreamState): UpstreamState =>
    state.status === "ready" ? state : { ...state, reason: redact(state.reason, catalog.secrets) };
  const refs = new Map([...catalog.upstreams.values()].map((u) => [u.name, liveRef(u)]));
  try {
    const names = [...catalog.upstreams.keys()];
    const progress = new LiveProgress(names);
    progress.start();
    const states = await Promise.all(
      names.map(async (name) => {
        const state = shown((await pool.ensure([name], refs)).get(name)!);
        progress.answered(
          name,
          state.status === "ready" ? `${state.tools.length} tool(s)` : `unavailable: ${state.reason}`,
        );
        return [name, state] as const;
      }),
    );
    progress.end();
    return await use({
      pool,
      inventory: new Map<string, UpstreamState>(states),
      refresh: async (name) => shown(await pool.refresh(refs.get(name) ?? sharedRef(name))),
      // A per-session instance declares roots too (upstreamCapabilities): what its client would be shown.
      probe: async (name) => {
        const ref = sessionRef(name, "toolpacks --live probe");
        try {
          return shown((await pool.ensure([name], new Map([[name, ref]]))).get(name)!);
        } catch (err) {
          // No instance to spare (max_instances): nothing more is known.
          return { status: "unavailable", reason: (err as Error).message };
        }
      },
    });
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
