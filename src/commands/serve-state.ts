/** @module The state store and tracing a server runs with: opened from the catalog's plans, closed at the end. */
import type { Catalog } from "../catalog/types.js";
import type { Logger } from "../log.js";
import { openStateStore } from "../state/open.js";
import type { StateStore } from "../state/types.js";
import { tracingFor } from "../tracing/create.js";
import type { Tracing } from "../tracing/types.js";

export interface ServingParts {
  readonly state: StateStore;
  readonly tracing: Tracing;
  /** Flushes the spans, closes the store. */
  close(): Promise<void>;
}

/**
 * Opens the store the catalog names under the deployment's name (keys `toolpacks:<name>:`). A Redis that
 * cannot be reached does not stop the start: the server runs with the store down (requests that need it
 * fail, /readyz answers 503) and it comes up by itself when Redis does. Each change of health is logged.
 */
export async function openServing(
  catalog: Catalog,
  name: string,
  version: string,
  logger: Logger,
): Promise<ServingParts> {
  const plan = catalog.state.kind === "redis" ? { ...catalog.state, name } : catalog.state;
  const store = plan.kind === "redis" ? plan.description : "memory";
  const state = await openStateStore(plan, {
    wait: false,
    onHealth: (health, reason) => {
      if (health === "down") {
        logger.warn("state store unavailable: requests that need it fail, /readyz answers 503", {
          store,
          reason,
        });
      } else logger.info("state store is back", { store });
    },
  });
  if (plan.kind === "redis" && state.health() === "up") logger.info("state store connected", { store });
  const tracing = await tracingFor(catalog.tracing, version);
  if (catalog.tracing) {
    logger.info("tracing on", { service: catalog.tracing.serviceName, ratio: catalog.tracing.sampleRatio });
  }
  return {
    state,
    tracing,
    close: async () => {
      await tracing.shutdown().catch(() => {});
      await state.close();
    },
  };
}
