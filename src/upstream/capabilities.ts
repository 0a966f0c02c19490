/**
 * @module What toolpacks declares to an upstream instance, by its kind. Light (no SDK import at run time): the
 * era probe of a stdio upstream may run before the SDK loads.
 */
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { Root, Upstream } from "../catalog/types.js";

/** The roots declared in the config for an upstream (`roots:`), as `file://` URIs. */
export function configRoots(spec: Upstream): readonly Root[] {
  return spec.roots;
}

/**
 * Sampling and elicitation are declared to every instance (their requests are delivered when tied to the call
 * that caused them, or always by an instance of one client). Roots: an instance several clients may share gets
 * them only when the config declares some (toolpacks answers from config, never from a client); an instance that
 * serves one client always (its client, or config). `owned`: `servesOneClient` of the instance.
 */
export function upstreamCapabilities(spec: Upstream, owned: boolean): ClientCapabilities {
  const roots = owned ? { listChanged: true } : configRoots(spec).length ? {} : undefined;
  return {
    sampling: {},
    elicitation: { form: {}, url: {} },
    ...(roots ? { roots } : {}),
  };
}
