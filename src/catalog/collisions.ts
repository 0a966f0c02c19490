/** @module Static name checks: two different upstream tools must never share one exposed name. */
import { type ConfigError, locate } from "../config/errors.js";
import { exposedName } from "./names.js";
import type { Member } from "./types.js";

/**
 * A member whose exposed name is known, in declaration order: every member that compiled, and one whose name
 * is right though something else about it (its title, its upstream's spec) failed, so that one error never
 * hides another.
 */
export interface NameClaim {
  readonly toolset: string;
  readonly member: Member;
  /** False when its title or description failed: they are not compared. */
  readonly textKnown: boolean;
}

interface Claim {
  readonly toolset: string;
  readonly tool: string;
  readonly where: string;
  /** Its title and description, or undefined when they are not known. */
  readonly override: string | undefined;
}

const NO_OVERRIDE = JSON.stringify([undefined, undefined]);

/**
 * Any two toolsets can be active together (`?a&b`), so any two exact members that expose one name for two
 * different upstream tools are an error. Globs are checked against live inventories by the resolver.
 * `prefixOf` gives an upstream's `prefix:` (undefined when it is not known: its members without `as:` are skipped).
 */
export function checkCollisions(
  members: Iterable<NameClaim>,
  prefixOf: (upstream: string) => string | undefined,
): ConfigError[] {
  const errors: ConfigError[] = [];
  const claims = new Map<string, Claim>();
  for (const { toolset, member: m, textKnown } of members) {
    if (m.regex) continue;
    const prefix = m.kind === "resource" ? "" : prefixOf(m.upstream);
    if (prefix === undefined && m.as === undefined) continue;
    const exposed = m.kind === "resource" ? m.pattern : exposedName(m.pattern, prefix ?? "", m.as);
    // Tools, prompts and resource URIs are separate namespaces.
    const name = `${m.kind}:${exposed}`;
    const claim: Claim = {
      toolset,
      tool: `${m.upstream}/${m.pattern}`,
      where: m.where,
      override: textKnown ? JSON.stringify([m.title, m.description]) : undefined,
    };
    const prev = claims.get(name);
    if (!prev) {
      claims.set(name, claim);
      continue;
    }
    if (prev.tool !== claim.tool) {
      errors.push({
        ...locate(m.where),
        message: `exposed ${m.kind === "resource" ? "resource URI" : `${m.kind} name`} "${exposed}" is used by ${claim.tool} (toolset ${toolset}) and by ${prev.tool} (toolset ${prev.toolset}, at ${prev.where})`,
        hint: `rename one with "as:", or give its upstream a "prefix:"`,
      });
    } else if (
      prev.override !== undefined &&
      claim.override !== undefined &&
      prev.override !== claim.override &&
      claim.override !== NO_OVERRIDE
    ) {
      if (prev.override === NO_OVERRIDE) claims.set(name, claim);
      else
        errors.push({
          ...locate(m.where),
          message: `${claim.tool} is exposed as "${exposed}" with a different title or description than at ${prev.where}`,
          hint: "describe it once, or expose the second under another name with as:",
        });
    }
  }
  return errors;
}
