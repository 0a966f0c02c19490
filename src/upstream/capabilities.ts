/**
 * @module What the proxy declares to an upstream as its client, and the roots it answers itself. An upstream
 * decides its tool list by these (server-everything lists 13 tools to a bare client, 17 with them), so every
 * command declares the same for the same kind of instance: `serve`, `toolsets --live`, `check --live`.
 */
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { Root, Upstream } from "../catalog/types.js";
import type { InstanceKind } from "./instance.js";

/** The roots declared in the config for an upstream (`roots:`), as `file://` URIs. */
export function configRoots(spec: Upstream): readonly Root[] {
  return spec.roots;
}

/**
 * Sampling and elicitation are declared to every instance (their requests are delivered when tied to the call
 * that caused them). Roots: a shared or per-credential instance gets them only when the config declares some
 * (toolpacks answers from config, never from a client); a per-session instance always (its client, or config).
 */
export function upstreamCapabilities(spec: Upstream, kind: InstanceKind): ClientCapabilities {
  const roots = kind === "session" ? { listChanged: true } : configRoots(spec).length ? {} : undefined;
  return {
    sampling: {},
    elicitation: { form: {}, url: {} },
    ...(roots ? { roots } : {}),
  };
}
