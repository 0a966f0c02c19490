/** @module Routing URIs that are not listed verbatim: resource template instances and resource globs. */
import type { Resolution } from "./types.js";

/** `test://template/{id}/data` → a RegExp matching its instances (RFC 6570 level 1: `{x}` is one segment). */
export function templateRegExp(template: string): RegExp {
  const parts = template.split(/\{[^}]*\}/).map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${parts.join("[^/]+")}$`);
}

/** The upstream a URI belongs to in this resolution, or undefined. */
export function routeUri(resolution: Resolution, uri: string): string | undefined {
  const exact = resolution.resource.get(uri);
  if (exact) return exact.upstream;
  return resolution.uriRoutes.find((r) => r.regex.test(uri))?.upstream;
}
