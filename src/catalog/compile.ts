/** @module Compiles validated files into one frozen Catalog; collects every error with its position. */

import type { Env } from "../config/env.js";
import type { ConfigError } from "../config/errors.js";
import type { LoadedFile } from "../config/load.js";
import { authOf, forwardedTokenErrors } from "./auth.js";
import { checkCollisions } from "./collisions.js";
import { deepFreeze } from "./freeze.js";
import { auditOf, requirementsOf } from "./identity.js";
import { limitsOf } from "./limits.js";
import { type Declared, makeMember, sameMember } from "./members.js";
import { NAME_RULE, nameProblem, parseRef } from "./names.js";
import { perUserWithoutAuth } from "./oauth.js";
import { statePlanOf, tracingPlanOf } from "./settings.js";
import { stateDirOf } from "./state-dir.js";
import { checkInheritEnv } from "./stdio-env.js";
import { type Draft, implicitToolsets, makeToolset } from "./toolsets.js";
import type { Catalog, Toolset, Upstream } from "./types.js";
import { uiOf } from "./ui.js";
import { makeUpstream, sameSpec } from "./upstreams.js";
import { where } from "./where.js";

export type CompileResult = { ok: true; catalog: Catalog } | { ok: false; errors: ConfigError[] };

export interface CompileOptions {
  /** For defaults taken from the environment (the state folder). */
  readonly env?: Env;
  /** False when some file could not be read or parsed: what it declared is unknown, so nothing is "undeclared". */
  readonly complete?: boolean;
}

export function compile(files: readonly LoadedFile[], options: CompileOptions = {}): CompileResult {
  const complete = options.complete ?? true;
  const errors: ConfigError[] = [];
  const auth = authOf(files, errors);
  const audit = auditOf(files, errors);
  const requires = requirementsOf(files, errors);
  const { upstreams, declared } = compileUpstreams(files, complete, errors);
  errors.push(...checkInheritEnv(files));

  const drafts = new Map<string, Draft>();
  const mentioned = new Set<string>();
  for (const file of files) {
    const { source, config, broken, unresolved } = file;
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
          mentioned.add(parseRef(writtenRef(m))?.upstream ?? "");
          const memberPath = [...path, list, i];
          if (broken.within(memberPath) || unresolved.within(memberPath)) return;
          const member = makeMember(kind, m, memberPath, file, upstreams, declared, errors);
          if (member && !draft.members.some((x) => sameMember(x, member))) draft.members.push(member);
        });
      }
    }
  }

  const toolsets: Toolset[] = [...drafts.values()].map((d) => makeToolset(d, false, requires.get(d.name)));
  // With a file missing or a toolset unreadable, an upstream may be mentioned there: no verdict on it.
  const knowsMentions =
    complete &&
    files.every((f) => Object.keys(f.config.toolsets ?? {}).every((k) => !f.broken.at(["toolsets", k])));
  const implicitErrors: ConfigError[] = [];
  toolsets.push(...implicitToolsets(upstreams.values(), mentioned, drafts, implicitErrors));
  if (knowsMentions) errors.push(...implicitErrors);
  if (auth) errors.push(...forwardedTokenErrors(upstreams.values()));
  else if (!files.some((f) => f.config.auth)) errors.push(...perUserWithoutAuth(upstreams.values()));
  const finalUpstreams = new Map([...upstreams].map(([k, u]) => [k, { ...u, covered: mentioned.has(k) }]));
  errors.push(...checkCollisions(toolsets, finalUpstreams));
  const name = files.find((f) => f.config.name !== undefined)?.config.name ?? "toolpacks";
  const state = statePlanOf(files, name, options.env ?? {}, errors);
  const tracing = tracingPlanOf(files, options.env ?? {}, errors);
  if (errors.length) return { ok: false, errors };

  const autoDefer = files.find((f) => f.config.search?.auto_over_tokens !== undefined)?.config.search;
  const instructions = files.map((f) => f.config.instructions?.trim()).filter((s): s is string => !!s);
  const catalog: Catalog = {
    name,
    ...(auth ? { auth } : {}),
    audit,
    secrets: new Map(files.flatMap((f) => [...f.secrets])),
    stateMaxBytes: state.limits.maxOwnerBytes,
    state,
    ...(tracing ? { tracing } : {}),
    limits: limitsOf(files),
    stateDir: stateDirOf(files, options.env ?? {}),
    ...(instructions.length ? { instructions: instructions.join("\n\n") } : {}),
    ...(autoDefer?.auto_over_tokens ? { autoDeferOverTokens: autoDefer.auto_over_tokens } : {}),
    ui: uiOf(files),
    upstreams: finalUpstreams,
    toolsets,
    toolset: new Map(toolsets.map((t) => [t.name, t])),
  };
  return { ok: true, catalog: deepFreeze(catalog) };
}

/** The `upstream/name` a member entry names, whatever else is wrong with it ("" when it names none). */
function writtenRef(m: unknown): string {
  const ref =
    m && typeof m === "object"
      ? ((m as { tool?: unknown; prompt?: unknown }).tool ?? (m as { prompt?: unknown }).prompt)
      : m;
  return typeof ref === "string" ? ref : "";
}

/** Every upstream that compiles, and every name declared (a spec that failed still declares its name). */
function compileUpstreams(
  files: readonly LoadedFile[],
  complete: boolean,
  errors: ConfigError[],
): { upstreams: Map<string, Upstream>; declared: Declared } {
  const upstreams = new Map<string, Upstream>();
  const names = new Set<string>();
  let all = !complete;
  for (const file of files) {
    const { source, config, raw, broken } = file;
    if (broken.at(["upstreams"])) all = true;
    for (const [key, spec] of Object.entries(config.upstreams ?? {})) {
      const path = ["upstreams", key];
      names.add(key);
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
      if (broken.within(path)) continue;
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
  return { upstreams, declared: { names, all } };
}
