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

/** The client of one 2026-07-28 request: its own envelope, nothing remembered. */
export function modernClient(envelope: Envelope): CallClient {
  return {
    era: "2026-07-28",
    capabilities: envelope.clientCapabilities as ClientCapabilities,
    logLevel: envelope.logLevel,
    envelope,
  };
}
