/**
 * @module The 2025 codec: sessions opened by `initialize`; results and errors as the core makes them; a client that
 * may be asked (sampling, elicitation, roots on its session). The methods only 2026-07-28 has are unknown here.
 */
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { LogLevel } from "../proxy/peer.js";
import type { CallClient } from "../proxy/state.js";
import { errors } from "../wire/errors.js";
import type { Codec } from "./codec.js";

/** Methods of 2026-07-28 that a 2025 session does not have. */
const MODERN_ONLY: ReadonlySet<string> = new Set(["server/discover", "subscriptions/listen"]);

const legacyCodec: Codec = Object.freeze({
  era: "2025",
  askable: true,
  accept(method: string): void {
    if (MODERN_ONLY.has(method)) throw errors.methodNotFound(method);
  },
  result: (_method: string, _params: unknown, result: Record<string, unknown>) => result,
  error: (err: unknown) => err,
});

/** The client of a 2025 session's requests: what its initialize declared, the level it set last. */
export function legacyClientOf(s: {
  clientCapabilities: ClientCapabilities | undefined;
  logLevel: LogLevel;
  protocolVersion: string | undefined;
}): CallClient {
  return {
    codec: legacyCodec,
    get capabilities() {
      return s.clientCapabilities;
    },
    get logLevel() {
      return s.logLevel;
    },
    get protocolVersion() {
      return s.protocolVersion;
    },
  };
}
