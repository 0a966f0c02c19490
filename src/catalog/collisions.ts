/** @module Static name checks: two different upstream tools must never share one exposed name. */
import { type ConfigError, locate } from "../config/errors.js";
import { exposedName } from "./names.js";
import type { Toolset, Upstream } from "./types.js";

interface Claim {
  readonly toolset: string;
  readonly tool: string;
  readonly where: string;
  readonly override: string;
}

/**
 * Any two toolsets can be active together (`?a&b`), so any two exact members that expose one name for two
 * different upstream tools are an error. Globs are checked against live inventories by the resolver.
 */
export function checkCollisions(
  toolsets: readonly Toolset[],
  upstreams: ReadonlyMap<string, Upstream>,
): ConfigError[] {
  const errors: ConfigError[] = [];
  const claims = new Map<string, Claim>();
  for (const t of toolsets) {
    for (const m of t.members) {
      if (m.regex) continue;
      const prefix = m.kind === "resource" ? "" : (upstreams.get(m.upstream)?.prefix ?? "");
      const exposed = m.kind === "resource" ? m.pattern : exposedName(m.pattern, prefix, m.as);
      // Tools, prompts and resource URIs are separate namespaces.
      const name = `${m.kind}:${exposed}`;
      const claim: Claim = {
        toolset: t.name,
        tool: `${m.upstream}/${m.pattern}`,
        where: m.where,
        override: JSON.stringify([m.title, m.description]),
      };
      const prev = claims.get(name);
      if (!prev) {
        claims.set(name, claim);
        continue;
      }
      if (prev.tool !== claim.tool) {
        errors.push({
          ...locate(m.where),
          message: `exposed ${m.kind === "resource" ? "resource URI" : `${m.kind} name`} "${exposed}" is used by ${claim.tool} (toolset ${t.name}) and by ${prev.tool} (toolset ${prev.toolset}, at ${prev.where})`,
          hint: `rename one with "as:", or give its upstream a "prefix:"`,
        });
      } else if (
        prev.override !== claim.override &&
        claim.override !== JSON.stringify([undefined, undefined])
      ) {
        if (prev.override === JSON.stringify([undefined, undefined])) claims.set(name, claim);
        else
          errors.push({
            ...locate(m.where),
            message: `${claim.tool} is exposed as "${exposed}" with a different title or description than at ${prev.where}`,
            hint: "describe it once, or expose the second under another name with as:",
          });
      }
    }
  }
  return errors;
}
