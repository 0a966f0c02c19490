/**
 * @module One codec per protocol era (SPEC §12): what a request of that era may ask, how its result and errors
 * read on its wire, and whether its client may be sent server→client requests. The core answers every request
 * in one internal shape; the client view of a request (its `CallClient`) carries its era's codec.
 */
import type { Params } from "../proxy/peer.js";

/** What an answer's caching hints are made from (2026-07-28, server/utilities/caching). */
export interface AnswerFacts {
  /** The answer may depend on who asks (credentials, identity, gated toolsets, non-shared instances). */
  readonly private: boolean;
  readonly serverInfo: { readonly name: string; readonly version: string };
  /** How long a list or `server/discover` may be reused, when nothing says less. */
  readonly cacheTtlMs: number;
}

export interface Codec {
  readonly era: "2025" | "2026-07-28";
  /** A request of this era may be sent server→client requests (a 2026-07-28 one gets input_required rounds). */
  readonly askable: boolean;
  /** Refuses a method this era does not have, before anything runs (throws the error to answer). */
  accept(method: string): void;
  /** The core's result as this era's client gets it. */
  result(method: string, params: Params, result: Params, facts: AnswerFacts): Params;
  /** The core's error as this era numbers it. */
  error(err: unknown): unknown;
}
