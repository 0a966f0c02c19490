/** @module One toolset member (a tool, prompt or resource reference) checked against the declared upstreams. */
import { type ConfigError, closest } from "../config/errors.js";
import type { LoadedFile } from "../config/load.js";
import type { MemberSpec, PromptSpec } from "../config/types.js";
import { globToRegExp, isGlob, parseRef, TOOL_NAME_RULE } from "./names.js";
import type { Member, MemberKind } from "./types.js";
import { where } from "./where.js";

/** A member listed twice in one toolset (in one file or across files) is kept once. */
export function sameMember(a: Member, b: Member): boolean {
  return a.ref === b.ref && a.as === b.as && a.title === b.title && a.description === b.description;
}

/** Whether a member names this item (exact name, or its glob). */
export function memberMatches(m: Member, key: string): boolean {
  return m.regex ? m.regex.test(key) : m.pattern === key;
}

/** The ref reports show: a tool's as written, a prompt's or resource's with its kind in front. */
export function refOf(kind: MemberKind, ref: string): string {
  return kind === "tool" ? ref : `${kind}:${ref}`;
}

/** Upstream names written anywhere (even where their spec failed); `all` when some file's list is unreadable. */
export interface Declared {
  readonly names: ReadonlySet<string>;
  readonly all: boolean;
}

/**
 * The compiled member, or undefined with its problem pushed onto `errors`. A member of a declared upstream
 * whose spec failed is made all the same: its name is still checked, but the catalog never holds it (its
 * upstream's own errors say why).
 */
export function makeMember(
  kind: MemberKind,
  spec: MemberSpec | PromptSpec,
  path: (string | number)[],
  file: LoadedFile,
  declared: Declared,
  errors: ConfigError[],
): Member | undefined {
  const { source } = file;
  const obj: { ref: string; as?: string; title?: string; description?: string } =
    typeof spec === "string" ? { ref: spec } : { ...spec, ref: "tool" in spec ? spec.tool : spec.prompt };
  const refPath = typeof spec === "string" ? path : [...path, kind];
  const ref = parseRef(obj.ref);
  const noun = kind === "resource" ? "resource URI" : `${kind} name`;
  if (!ref) {
    const example = {
      tool: "github/list_issues",
      prompt: "everything/simple-prompt",
      resource: "memory/memory://knowledge-graph",
    }[kind];
    errors.push(
      source.error(
        refPath,
        `"${obj.ref}" is not a ${kind} reference`,
        `write "upstream/${kind === "resource" ? "uri" : kind}", e.g. "${example}"`,
      ),
    );
    return undefined;
  }
  if (!declared.all && !declared.names.has(ref.upstream)) {
    const guess = closest(ref.upstream, declared.names);
    errors.push(
      source.error(
        refPath,
        `"${obj.ref}" refers to upstream "${ref.upstream}", which is not declared`,
        guess ? `did you mean "${guess}/${ref.pattern}"?` : "declare it under upstreams:",
      ),
    );
    return undefined;
  }
  const glob = isGlob(ref.pattern);
  if (glob && typeof spec !== "string") {
    errors.push(
      source.error(
        refPath,
        `"${obj.ref}" is a glob, but an override (as/title/description) names one ${kind}`,
        `name the ${kind} exactly`,
      ),
    );
    return undefined;
  }
  if (!glob && kind === "tool" && !TOOL_NAME_RULE.test(ref.pattern)) {
    errors.push(
      source.error(refPath, `"${ref.pattern}" is not a valid ${noun}`, "1-128 of A-Z a-z 0-9 _ . -"),
    );
    return undefined;
  }
  if (obj.as !== undefined && !TOOL_NAME_RULE.test(obj.as)) {
    errors.push(
      source.error(
        [...path, "as"],
        `exposed name "${obj.as}" is not a valid ${kind} name`,
        "1-128 of A-Z a-z 0-9 _ . -",
      ),
    );
    return undefined;
  }
  return {
    kind,
    upstream: ref.upstream,
    pattern: ref.pattern,
    ref: refOf(kind, obj.ref),
    ...(glob ? { regex: globToRegExp(ref.pattern) } : {}),
    required: true,
    ...(obj.as !== undefined ? { as: obj.as } : {}),
    ...(obj.title !== undefined ? { title: obj.title } : {}),
    ...(obj.description !== undefined ? { description: obj.description } : {}),
    where: where(source.at(refPath), source.file),
  };
}
