/**
 * @module Opening one upstream instance: its era (pinned, remembered, or probed), then its transport, then the
 * channel of that era (the 2025 handshake, or a 2026-07-28 channel that adopts the probe's discover result).
 */

import type { Upstream } from "../catalog/types.js";
import type { Logger } from "../log.js";
import { MODERN_VERSION } from "../modern/wire.js";
import { upstreamCapabilities } from "./capabilities.js";
import type { Channel, ChannelEvents } from "./channel.js";
import type { ConnectionOptions } from "./connection-options.js";
import { type EraCache, findEra } from "./era.js";
import { openLegacy } from "./legacy-channel.js";
import { openModern } from "./modern-channel.js";
import { type BuiltTransport, buildTransport, httpDispatcher } from "./transport.js";

/** What an opening has made so far: the caller closes it (or reads its stderr) when the opening fails. */
export interface Opening {
  built?: BuiltTransport;
}

export async function openChannel(
  spec: Upstream,
  options: ConnectionOptions,
  run: { eras: EraCache; signal: AbortSignal; log: Logger; onClosed(): void; onListChanged(): unknown },
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
  const kind = options.kind ?? "shared";
  const clientInfo = { name: options.clientName, version: options.clientVersion };
  const instance = options.instance?.();
  const era = await findEra(spec, {
    eras: run.eras,
    ...(options.variant ? { variant: options.variant } : {}),
    ...(instance ? { instance } : {}),
    who: { clientCapabilities: upstreamCapabilities(spec, kind), clientInfo },
    dispatcher: httpDispatcher,
    signal: run.signal,
    found: (v) =>
      run.log.debug("protocol era probed", { verdict: v.kind, ...("why" in v ? { why: v.why } : {}) }),
  });
  if (run.signal.aborted) throw new Error("closed while starting");
  const built = await buildTransport(spec, options.variant, spec.name, instance, options.auth);
  opening.built = built;
  const setup = { spec, kind, built, clientInfo, logger: run.log, events };
  const timeout = spec.connectTimeoutMs;
  return era.era === MODERN_VERSION
    ? openModern(setup, MODERN_VERSION, era.discover, timeout)
    : openLegacy(setup, timeout);
}
