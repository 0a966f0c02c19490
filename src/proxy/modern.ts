/**
 * @module Answering a 2026-07-28 request in a session: `server/discover`, the methods that era removed, the
 * tasks extension (not offered), then every other method as a 2025 session answers it, finished for the era:
 * `resultType`, toolpacks' own serverInfo in `_meta`, `ttlMs`/`cacheScope` where cacheable, resource not
 * found as -32602.
 */
import type { JSONRPCMessage, ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { decorate, readHint } from "../modern/cache.js";
import { stampResult } from "../modern/meta.js";
import { MODERN_VERSION } from "../modern/wire.js";
import { rpcError } from "./errors.js";
import type { ListenHost } from "./listen.js";
import { handle } from "./methods.js";
import type { Params } from "./peer.js";
import type { Call, SessionState } from "./state.js";

/** Where a request's related messages and its answer go: the session's transport, or one HTTP exchange. */
export interface Reply {
  send(message: JSONRPCMessage): Promise<void>;
  /** The request gets no answer (it was cancelled): whatever waits for it may end. */
  abandon(): void;
}

export interface ModernSession extends SessionState {
  readonly capabilities: ServerCapabilities;
  /** Its answers may depend on who asks (non-shared instances, credentials): their cache scope is private. */
  readonly private: boolean;
  readonly listeners: ListenHost;
}

/** Methods of the 2025 era that 2026-07-28 removed: unknown to a 2026-07-28 request (HTTP 404). */
const REMOVED = new Set([
  "initialize",
  "ping",
  "logging/setLevel",
  "resources/subscribe",
  "resources/unsubscribe",
]);

export async function answerModern(
  s: ModernSession,
  method: string,
  params: Params,
  call: Call,
): Promise<Params> {
  if (REMOVED.has(method))
    throw rpcError(-32601, `Method not found: ${method} (not part of MCP ${MODERN_VERSION})`);
  if (method.startsWith("tasks/")) {
    throw rpcError(
      -32601,
      `Method not found: ${method} (this server does not offer the io.modelcontextprotocol/tasks extension)`,
    );
  }
  let result: Params;
  if (method === "server/discover") result = discover(s);
  else if (method === "subscriptions/listen") result = await s.listeners.listen(params, call);
  else {
    try {
      result = await handle(s, method, params, call);
    } catch (err) {
      // 2026-07-28 renumbered "resource not found" to -32602.
      if ((err as { code?: number }).code === -32002) throw Object.assign(err as Error, { code: -32602 });
      throw err;
    }
  }
  const stamped = stampResult(result, s.host.serverInfo);
  const retry = params.inputResponses !== undefined || params.requestState !== undefined;
  const own = method === "resources/read" ? (readHint(result).ttlMs ?? 0) : s.host.cacheTtlMs;
  return decorate(stamped, {
    method,
    retry,
    dependsOnCaller: s.private,
    upstream: method === "resources/read" ? [result] : [],
    ttlMs: own,
  });
}

/** `server/discover`: what this selection offers, for the client that asks (SPEC §12.1). */
function discover(s: ModernSession): Params {
  const instructions = s.resolution.instructions;
  return {
    supportedVersions: [MODERN_VERSION],
    capabilities: s.capabilities,
    ...(instructions ? { instructions } : {}),
  };
}
