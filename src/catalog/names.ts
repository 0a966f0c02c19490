/** @module The one codec for names: `upstream/tool` refs, globs, exposed names and the rules they follow. */

/** Toolset and upstream names: URL-safe, no separators (`,`, space, `&`, `=`). */
export const NAME_RULE = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/;
/** Query keys that are not toolset names. */
export const RESERVED_KEYS: readonly string[] = ["toolsets", "only", "without", "defer"];
/** MCP tool-name rule (SEP-986): 1-128 of A-Z a-z 0-9 _ . - */
export const TOOL_NAME_RULE = /^[A-Za-z0-9_.-]{1,128}$/;

export function nameProblem(name: string): string | undefined {
  if (RESERVED_KEYS.includes(name)) return `"${name}" is a reserved query key (${RESERVED_KEYS.join(", ")})`;
  if (!NAME_RULE.test(name)) {
    return `"${name}" is not URL-safe: use 1-64 of letters, digits, "_", ".", "-" (not first: "." or "-")`;
  }
  return undefined;
}

export interface Ref {
  readonly upstream: string;
  readonly pattern: string;
}

/** `github/list_issues` → {github, list_issues}. The first "/" splits; the rest may hold more (resource URIs). */
export function parseRef(ref: string): Ref | undefined {
  const slash = ref.indexOf("/");
  if (slash <= 0 || slash === ref.length - 1) return undefined;
  return { upstream: ref.slice(0, slash), pattern: ref.slice(slash + 1) };
}

export function isGlob(pattern: string): boolean {
  return pattern.includes("*");
}

/** `*` matches within one `/` segment, `**` across segments; everything else is literal. */
export function globToRegExp(pattern: string): RegExp {
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*") {
      if (pattern[i + 1] === "*") {
        out += ".*";
        i++;
      } else out += "[^/]*";
    } else out += c.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${out}$`);
}

/** The name a client sees: `as` when given (verbatim), else the upstream's prefix and the original name. */
export function exposedName(original: string, prefix: string, as: string | undefined): string {
  return as ?? prefix + original;
}
