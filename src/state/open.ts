/** @module Opens the store a plan names. The Redis client is imported only when a plan asks for Redis. */
import type { StatePlan } from "./config.js";
import { MemoryStateStore } from "./memory.js";
import type { StateStore, StoreHealth } from "./types.js";

export interface OpenStateOptions {
  /** The clock of the memory store (tests pass a fake one). */
  readonly now?: () => number;
  /** Told when a Redis store goes down or comes back (e.g. to log it once per change). */
  readonly onHealth?: (health: StoreHealth, reason?: string) => void;
  /**
   * False: when Redis cannot be reached at open, return a store that is down and comes up by itself (a server
   * then starts, and /readyz says 503 until Redis is there). Default true: reject.
   */
  readonly wait?: boolean;
}

/**
 * The store of a plan. For Redis it connects first, and rejects with `StoreUnavailableError` (naming the
 * store, password redacted) when Redis cannot be reached within the plan's timeout.
 */
export async function openStateStore(plan: StatePlan, options: OpenStateOptions = {}): Promise<StateStore> {
  if (plan.kind === "memory") {
    return new MemoryStateStore({ limits: plan.limits, ...(options.now && { now: options.now }) });
  }
  const { RedisStateStore } = await import("./redis.js");
  return RedisStateStore.open(
    {
      url: plan.url,
      description: plan.description,
      name: plan.name,
      limits: plan.limits,
      timeoutMs: plan.timeoutMs,
      ...(options.onHealth && { onHealth: options.onHealth }),
    },
    options.wait ?? true,
  );
}
