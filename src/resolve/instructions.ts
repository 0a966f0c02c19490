/** @module A session's instructions: the host's own, then one section per active toolset that has some. */
import type { Catalog, Toolset } from "../catalog/types.js";

/** Host instructions, then `## <title>` sections for active toolsets with instructions, by name. */
export function sessionInstructions(catalog: Catalog, active: readonly string[]): string | undefined {
  const parts: string[] = [];
  if (catalog.instructions) parts.push(catalog.instructions);
  const sections = active
    .map((n) => catalog.toolset.get(n))
    .filter((t): t is Toolset => !!t?.instructions)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const t of sections) parts.push(`## ${t.title}\n\n${t.instructions}`);
  return parts.length ? parts.join("\n\n") : undefined;
}
