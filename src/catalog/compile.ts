/** @module Compiles validated files into one frozen Catalog; collects every error with its position. */

import { type ConfigError, locate } from "../config/errors.js";
import type { LoadedFile } from "../config/load.js";
import type { ToolsetSpec } from "../config/types.js";
import { checkCollisions } from "./collisions.js";
import { deepFreeze } from "./freeze.js";
import { makeMember, refOf, sameMember } from "./members.js";
import { globToRegExp, NAME_RULE, nameProblem } from "./names.js";
import type { Catalog, Member, Toolset, Upstream } from "./types.js";
import { makeUpstream, sameSpec } from "./upstreams.js";
import { where } from "./where.js";

export type CompileResult = { ok: true; catalog: Catalog } | { ok: false; errors: ConfigError[] };

interface Draft {
  name: string;
  spec: ToolsetSpec;
  where: string;
  members: Member[];
}

export function compile(files: readonly LoadedFile[]): CompileResult {
  const errors: ConfigError[] = [];
  const upstreams = new Map<string, Upstream>();
  const drafts = new Map<string, Draft>();
  let name: string | undefined;
  const tokens: string[] = [];
  const instructions: string[] = [];

  for (const file of files) {
    const { source, config, raw } = file;
    name ??= config.name;
    (config.auth?.tokens ?? []).forEach((token, i) => {
      if (token.length < 8) {
        errors.push(
          file.source.error(
            ["auth", "tokens", i],
            "an auth token must be at least 8 characters",
            "check the variable it comes from",
          ),
        );
      } else tokens.push(token);
    });
    if (config.instructions?.trim()) instructions.push(config.instructions.trim());
    for (const [key, spec] of Object.entries(config.upstreams ?? {})) {
      const path = ["upstreams", key];
      if (!NAME_RULE.test(key)) {
        errors.push(
          source.error(
            path,
            `upstream name "${key}" may hold only letters, digits, "_", ".", "-"`,
            undefined,
            true,
          ),
        );
        continue;
      }
      const up = makeUpstream(key, spec, raw.upstreams?.[key] ?? spec, file, errors);
      if (!up) continue;
      const prev = upstreams.get(key);
      if (prev && !sameSpec(prev, up)) {
        errors.push(
          source.error(
            path,
            `upstream "${key}" is declared again with a different spec (first at ${prev.where})`,
            "declare it once, or give the second a different name",
            true,
          ),
        );
      } else if (!prev) upstreams.set(key, up);
    }
  }

  for (const file of files) {
    const { source, config } = file;
    for (const [key, spec] of Object.entries(config.toolsets ?? {})) {
      const path = ["toolsets", key];
      const problem = nameProblem(key);
      if (problem) {
        errors.push(source.error(path, `toolset name ${problem}`, "rename the toolset", true));
        continue;
      }
      let draft = drafts.get(key);
      if (!draft) {
        draft = { name: key, spec, where: where(source.at(path, true), source.file), members: [] };
        drafts.set(key, draft);
      }
      const lists = [
        ["tool", "tools", spec.tools ?? []],
        ["prompt", "prompts", spec.prompts ?? []],
        ["resource", "resources", spec.resources ?? []],
      ] as const;
      for (const [kind, list, specs] of lists) {
        specs.forEach((m, i) => {
          const member = makeMember(kind, m, [...path, list, i], file, upstreams, errors);
          if (member && !draft.members.some((x) => sameMember(x, member))) draft.members.push(member);
        });
      }
    }
  }

  const mentioned = new Set<string>();
  for (const d of drafts.values()) for (const m of d.members) mentioned.add(m.upstream);

  const toolsets: Toolset[] = [...drafts.values()].map((d) => makeToolset(d, false));
  for (const up of upstreams.values()) {
    if (mentioned.has(up.name)) continue;
    const clash = drafts.get(up.name);
    if (clash || nameProblem(up.name)) {
      errors.push({
        ...locate(up.where),
        message: clash
          ? `upstream "${up.name}" is in no toolset, so it would get a toolset of its own name, but toolset "${up.name}" (at ${clash.where}) exists`
          : `upstream "${up.name}" is in no toolset and its name cannot be a toolset name`,
        hint: "name its tools in a toolset, or rename the upstream",
      });
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
    toolsets.push(
      makeToolset(
        {
          name: up.name,
          spec: { description: `All tools of upstream ${up.name}.` },
          where: up.where,
          members,
        },
        true,
      ),
    );
  }
  if (tokens.length) {
    for (const up of upstreams.values()) {
      if (up.forwardHeaders.includes("authorization") || "authorization" in up.headerEnv) {
        errors.push({
          ...locate(up.where),
          message: `upstream "${up.name}" forwards the Authorization header, which carries the proxy's own bearer token (auth: is on)`,
          hint: "let clients send the upstream's credential in another header, e.g. forward_headers: [x-upstream-token]",
        });
      }
    }
  }
  const finalUpstreams = new Map([...upstreams].map(([k, u]) => [k, { ...u, covered: mentioned.has(k) }]));
  errors.push(...checkCollisions(toolsets, finalUpstreams));
  if (errors.length) return { ok: false, errors };

  const catalog: Catalog = {
    name: name ?? "toolpacks",
    tokens,
    secrets: new Map(files.flatMap((f) => [...f.secrets])),
    stateMaxBytes:
      files.find((f) => f.config.state?.max_session_bytes)?.config.state?.max_session_bytes ??
      8 * 1024 * 1024,
    ...(instructions.length ? { instructions: instructions.join("\n\n") } : {}),
    upstreams: finalUpstreams,
    toolsets,
    toolset: new Map(toolsets.map((t) => [t.name, t])),
  };
  return { ok: true, catalog: deepFreeze(catalog) };
}

function makeToolset(d: Draft, implicit: boolean): Toolset {
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
    implicit,
    members: d.members,
    upstreams,
    where: d.where,
    ...(s.capture ? { captureOverBytes: s.capture.over_bytes } : {}),
  };
}
