/** @module Who made a request: a 2025 session's live view, or one 2026-07-28 request's own envelope. */
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { Envelope } from "../modern/meta.js";
import type { LogLevel } from "./peer.js";
import type { CallClient } from "./state.js";

/** The client of a 2025 session's requests: what its initialize declared, the level it set last. */
export function legacyClientOf(s: {
  clientCapabilities: ClientCapabilities | undefined;
  logLevel: LogLevel;
}): CallClient {
  return {
    era: "2025",
    get capabilities() {
      return s.clientCapabilities;
    },
    get logLevel() {
      return s.logLevel;
    },
  };
}

/** The client of one 2026-07-28 request: its own envelope (and, over HTTP, its own client key), nothing remembered. */
export function modernClient(envelope: Envelope, clientKey?: string): CallClient {
  return {
    era: "2026-07-28",
    capabilities: envelope.clientCapabilities as ClientCapabilities,
    logLevel: envelope.logLevel,
    envelope,
    ...(clientKey !== undefined ? { clientKey } : {}),
  };
}

/** Who a call counts against (SPEC §7.6): the request's own client, else its session's. */
export function clientOf(s: { readonly client: string }, call: { readonly client: CallClient }): string {
  return call.client.clientKey ?? s.client;
}
