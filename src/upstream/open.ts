/**
 * @module Opening one upstream instance: its era (pinned, remembered, or probed: over HTTP before the transport is
 * built, over stdio on the started process itself) and its transport, then the channel of that era (the 2025
 * handshake, or a 2026-07-28 channel that adopts the probe's discover result).
 */

import type { Dispatcher } from "undici";
import type { Upstream } from "../catalog/types.js";
import type { Logger } from "../log.js";
import { MODERN_VERSION } from "../modern/wire.js";
import { upstreamCapabilities } from "./capabilities.js";
import type { Channel, ChannelEvents } from "./channel.js";
import type { ConnectionOptions } from "./connection-options.js";
import { type EraCache, findEra } from "./era.js";
import { openLegacy } from "./legacy-channel.js";
import { openModern } from "./modern-channel.js";
import { probeInPlace } from "./probe-stdio.js";
import { type BuiltTransport, buildTransport } from "./transport.js";

/** What an opening has made so far: the caller closes it (or reads its stderr) when the opening fails. */
export interface Opening {
  built?: BuiltTransport;
}

export async function openChannel(
  spec: Upstream,
  options: ConnectionOptions,
  run: {
    eras: EraCache;
    signal: AbortSignal;
    log: Logger;
    onClosed(): void;
    onListChanged(): unknown;
    /** HTTP: the instance's own connections, for its probe and its transport. */
    pool: () => Promise<Dispatcher>;
  },
  opening: Opening,
): Promise<Channel> {
  const { hooks } = options;
  const events: ChannelEvents = {
    onClosed: run.onClosed,
    onListChanged: () => void run.onListChanged(),
    ...(hooks.onNotification ? { onNotification: (n) => hooks.onNotification!(spec.name, n) } : {}),
    ...(hooks.onServerRequest
      ? { onServerRequest: (r, signal) => hooks.onServerRequest!(spec.name, r, signal) }
      : {}),
  };
  const owned = options.owned === true;
  const clientInfo = { name: options.clientName, version: options.clientVersion };
  const instance = options.instance?.();
  const who = { clientCapabilities: upstreamCapabilities(spec, owned), clientInfo };
  const given = options.transport;
  const build = async () =>
    (given && wrapped(given(spec))) ??
    buildTransport(spec, options.variant ?? {}, spec.name, instance, options.auth, run.pool);
  let reusable = true;
  const era = await findEra(spec, {
    eras: run.eras,
    ...(options.variant ? { variant: options.variant } : {}),
    who,
    dispatcher: run.pool,
    signal: run.signal,
    // A stdio upstream's era is asked of its own process (probe-stdio.ts): only the instance that probes starts
    // its process before the era is known; one that waits for another's probe starts after it.
    probeStdio: async () => {
      opening.built = await build();
      const probed = await probeInPlace(opening.built.transport, who, spec.connectTimeoutMs, run.signal);
      // A process that failed on its own (a line over max_line_bytes) answered nothing worth keeping.
      reusable = probed.reusable && opening.built.failure() === undefined;
      return probed.verdict;
    },
    found: (v) =>
      run.log.debug("protocol era probed", { verdict: v.kind, ...("why" in v ? { why: v.why } : {}) }),
  });
  if (run.signal.aborted) throw new Error("closed while starting");
  if (!opening.built) opening.built = await build();
  else if (!reusable) {
    // It exited on the probe or stayed silent: ended (its whole group) before a fresh one is spawned.
    run.log.debug("upstream replaced after the era probe", {});
    await opening.built.transport.close();
    if (run.signal.aborted) throw new Error("closed while starting");
    opening.built = await build();
  }
  const built = opening.built;
  const setup = { spec, owned, built, clientInfo, logger: run.log, events };
  const timeout = spec.connectTimeoutMs;
  return era.era === MODERN_VERSION
    ? openModern(setup, MODERN_VERSION, era.discover, timeout)
    : openLegacy(setup, timeout);
}

/** A transport an embedder or a test gives for an upstream (in process), as the pool's other transports look. */
function wrapped(transport: import("@modelcontextprotocol/sdk/shared/transport.js").Transport | undefined) {
  if (!transport) return undefined;
  const built: BuiltTransport = { transport, pid: () => null, stderrTail: [], failure: () => undefined };
  return built;
}
