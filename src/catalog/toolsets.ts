/** @module Toolsets compiled: declared ones from their drafts, and the implicit toolset of each unmentioned upstream. */
import type { Requires } from "../auth/types.js";
import { type ConfigError, locate } from "../config/errors.js";
import type { ToolsetSpec } from "../config/types.js";
import { refOf } from "./members.js";
import { globToRegExp, nameProblem } from "./names.js";
import type { Member, Toolset, Upstream } from "./types.js";

/** A declared toolset while its files are read: the first declaration's spec, every file's members. */
export interface Draft {
  readonly name: string;
  readonly spec: ToolsetSpec;
  readonly where: string;
  readonly members: Member[];
}

export function makeToolset(d: Draft, implicit: boolean, requires?: Requires): Toolset {
  const upstreams: string[] = [];
  for (const m of d.members) if (!upstreams.includes(m.upstream)) upstreams.push(m.upstream);
  const s = d.spec;
  return {
    name: d.name,
    title: s.title?.trim() || d.name,
    description: s.description ?? "",
    ...(s.instructions?.trim() ? { instructions: s.instructions.trim() } : {}),
    default: s.default ?? true,
    always: s.always ?? false,
    deferred: s.deferred ?? false,
    implicit,
    members: d.members,
    upstreams,
    where: d.where,
    ...(s.capture ? { captureOverBytes: s.capture.over_bytes } : {}),
    ...(requires ? { requires } : {}),
  };
}

/** Why an upstream no toolset mentions (declared at `where`) cannot get a toolset of its own name, if it cannot. */
export function implicitClash(
  name: string,
  where: string,
  drafts: ReadonlyMap<string, Draft>,
): ConfigError | undefined {
  const clash = drafts.get(name);
  if (!clash && !nameProblem(name)) return undefined;
  return {
    ...locate(where),
    message: clash
      ? `upstream "${name}" is in no toolset, so it would get a toolset of its own name, but toolset "${name}" (at ${clash.where}) exists`
      : `upstream "${name}" is in no toolset and its name cannot be a toolset name`,
    hint: "name its tools in a toolset, or rename the upstream",
  };
}

/** Each upstream no toolset mentions, as a toolset of its own name with all it offers. */
export function implicitToolsets(
  upstreams: Iterable<Upstream>,
  mentioned: ReadonlySet<string>,
  drafts: ReadonlyMap<string, Draft>,
  errors: ConfigError[],
): Toolset[] {
  const toolsets: Toolset[] = [];
  for (const up of upstreams) {
    if (mentioned.has(up.name)) continue;
    const clash = implicitClash(up.name, up.where, drafts);
    if (clash) {
      errors.push(clash);
      continue;
    }
    const members: Member[] = (["tool", "prompt", "resource"] as const).map((kind) => ({
      kind,
      upstream: up.name,
      pattern: kind === "resource" ? "**" : "*",
      ref: refOf(kind, `${up.name}/*`),
      regex: globToRegExp(kind === "resource" ? "**" : "*"),
      required: false,
      where: up.where,
    }));
    const spec = { description: `All tools of upstream ${up.name}.` };
    toolsets.push(makeToolset({ name: up.name, spec, where: up.where, members }, true));
  }
  return toolsets;
}
