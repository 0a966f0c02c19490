/**
 * @module The 2026-07-28 codec: no session and no handshake (each request carries its client in the `_meta`
 * envelope); the methods that era removed and the tasks extension (not offered) refused; every result finished for
 * the era (`resultType`, toolpacks' own serverInfo in `_meta`, `ttlMs`/`cacheScope` where cacheable); resource
 * not found numbered -32602; never sent a server→client request (a bridge turns one into an `input_required`
 * round, SPEC §12.4).
 */
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { CACHEABLE_METHODS, decorate, readHint } from "../modern/cache.js";
import { checkEnvelope, type Envelope, hasClaim, resultTypeOf, stampResult } from "../modern/meta.js";
import { MODERN_VERSION } from "../modern/wire.js";
import type { Params } from "../proxy/peer.js";
import type { CallClient } from "../proxy/state.js";
import { CODE, errors, WireError } from "../wire/errors.js";
import type { AnswerFacts, Codec } from "./codec.js";

/** Methods of the 2025 era that 2026-07-28 removed: unknown to a 2026-07-28 request (HTTP 404). */
const REMOVED: ReadonlySet<string> = new Set([
  "initialize",
  "ping",
  "logging/setLevel",
  "resources/subscribe",
  "resources/unsubscribe",
]);

const modernCodec: Codec = Object.freeze({
  era: "2026-07-28",
  askable: false,
  accept(method: string): void {
    if (REMOVED.has(method)) throw errors.notInModern(method, MODERN_VERSION);
    if (method.startsWith("tasks/")) throw errors.noTasks(method);
  },
  result(method: string, params: Params, result: Params, facts: AnswerFacts): Params {
    const stamped = stampResult(result, facts.serverInfo);
    // A complete answer of a method that is not cacheable is finished as it is (a tool call's, a prompt's).
    if (!CACHEABLE_METHODS.has(method) && resultTypeOf(stamped) === "complete") return stamped;
    const retry = params.inputResponses !== undefined || params.requestState !== undefined;
    const own = method === "resources/read" ? (readHint(result).ttlMs ?? 0) : facts.cacheTtlMs;
    return decorate(stamped, {
      method,
      retry,
      dependsOnCaller: facts.private,
      upstream: method === "resources/read" ? [result] : [],
      ttlMs: own,
    });
  },
  error(err: unknown): unknown {
    // 2026-07-28 renumbered "resource not found" to -32602.
    if ((err as { code?: number }).code !== CODE.resourceNotFound) return err;
    const e = err as { message?: string; data?: unknown };
    return new WireError(CODE.invalidParams, e.message ?? "Resource not found", e.data);
  },
});

/**
 * The client of one 2026-07-28 request: its own envelope, nothing remembered; over HTTP its own client key (its
 * context may serve several anonymous clients: what a call costs counts against the one that made it) and the
 * unknown names of its own URL (its context may have been made for another URL with the same toolsets).
 */
export function modernClient(
  envelope: Envelope,
  clientKey?: string,
  unknown?: readonly string[],
): CallClient {
  return {
    codec: modernCodec,
    capabilities: envelope.clientCapabilities as ClientCapabilities,
    logLevel: envelope.logLevel,
    protocolVersion: envelope.protocolVersion,
    envelope,
    // One shape for every request's client (what it has not is undefined).
    clientKey,
    unknown,
  };
}

/**
 * The client of a request in a conversation that may carry either era (stdio, in memory): a request that carries
 * the 2026-07-28 envelope is of that era, whatever came before; undefined for one that does not. A malformed
 * envelope is refused (throws the error to answer).
 */
export function modernClientOf(params: unknown): CallClient | undefined {
  if (!hasClaim(params)) return undefined;
  const read = checkEnvelope(params);
  if (!read.ok) throw read.refusal;
  return modernClient(read.envelope);
}
