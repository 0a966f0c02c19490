/**
 * @module The client of an upstream instance: what it declares, and the roots it answers itself. An upstream
 * decides its tool list by these (server-everything lists 13 tools to a bare client, 17 with them), so every
 * command declares the same for the same kind of instance: `serve`, `toolsets --live`, `check --live`.
 */
import type { Root, Upstream } from "../catalog/types.js";
import { configRoots } from "./capabilities.js";

export { configRoots, upstreamCapabilities } from "./capabilities.js";

/**
 * What the proxy answers an upstream itself, whoever the request is tied to: the roots/list of an instance several
 * clients may share comes from the config, never from a client (one client's roots must not steer a shared
 * server). `owned`: the instance serves one client (`servesOneClient`), whose roots it gets.
 */
export function answerItself(
  spec: Upstream,
  owned: boolean,
  method: string,
): { roots: readonly Root[] } | undefined {
  if (method !== "roots/list" || owned) return undefined;
  return { roots: configRoots(spec) };
}
