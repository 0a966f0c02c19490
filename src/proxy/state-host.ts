/** @module What a gateway serves sessions with besides upstreams: the state store, the handles on it, tracing, find_tools indexes. */
import type { Catalog } from "../catalog/types.js";
import { LimitNotices } from "../limit-notices.js";
import type { Logger } from "../log.js";
import type { Metrics } from "../metrics.js";
import { MemoryStateStore } from "../state/memory.js";
import type { StateStore } from "../state/types.js";
import { NOOP_TRACING } from "../tracing/noop.js";
import type { Tracing } from "../tracing/types.js";
import { HandleStore } from "./handles.js";
import { SearchIndexes } from "./search-indexes.js";

export interface ServingOptions {
  readonly logger: Logger;
  /** Where captured values and ended session ids live (default: this process's memory). */
  readonly state?: StateStore;
  /** Spans per request (default: off, at no cost). */
  readonly tracing?: Tracing;
  /** The session secret replicas share: 2026-07-28 callers' values get the same owner on each of them. */
  readonly stateSecret?: string;
}

export interface Serving {
  readonly state: StateStore;
  readonly handles: HandleStore;
  readonly tracing: Tracing;
}

/**
 * The store given, or a memory store with the catalog's budgets. A catalog whose `state.store` names Redis
 * needs the store opened first (`openStateStore(catalog.state)`): it never falls back to memory, which would
 * split one deployment's state in two.
 */
export function servingOf(catalog: Catalog, options: ServingOptions): Serving {
  const plan = catalog.state;
  if (!options.state && plan.kind !== "memory") {
    throw new Error(
      `state.store is ${plan.description}: open it with openStateStore(catalog.state) and pass it as \`state\``,
    );
  }
  const state = options.state ?? new MemoryStateStore({ limits: plan.limits });
  const handles = new HandleStore({
    store: state,
    maxOwnerBytes: plan.limits.maxOwnerBytes,
    logger: options.logger,
    ...(options.stateSecret ? { secret: options.stateSecret } : {}),
  });
  return { state, handles, tracing: options.tracing ?? NOOP_TRACING };
}

/**
 * A gateway's indexes: each one dropped to make room counts as `search_indexes` in
 * `toolpacks_limit_hits_total` and is said in the log (warn once a minute). `host` is read at each drop.
 */
export function gatewaySearchIndexes(host: {
  readonly metrics: Pick<Metrics, "limited">;
  readonly logger: Logger;
  now(): number;
}): SearchIndexes {
  let notices: LimitNotices | undefined;
  return new SearchIndexes({
    evicted: () => {
      host.metrics.limited.inc({ limit: "search_indexes" });
      notices ??= new LimitNotices(host.logger, () => host.now());
      notices.say(
        "search_indexes",
        "a find_tools index was dropped to make room for another (it is built again at its next search)",
      );
    },
  });
}
