/** @module Compiles validated files into one frozen Catalog; collects every error with its position. */

import type { Env } from "../config/env.js";
import type { ConfigError } from "../config/errors.js";
import type { LoadedFile } from "../config/load.js";
import type { Path } from "../config/source.js";
import type { MemberSpec, PromptSpec } from "../config/types.js";
import { authOf, forwardedTokenErrors } from "./auth.js";
import { clientsOf } from "./clients.js";
import { checkCollisions, type NameClaim } from "./collisions.js";
import { deepFreeze } from "./freeze.js";
import { auditOf, requirementsOf } from "./identity.js";
import { limitsOf } from "./limits.js";
import { type Declared, makeMember, sameMember } from "./members.js";
import { NAME_RULE, nameProblem, parseRef } from "./names.js";
import { adminErrors, perUserWithoutAuth } from "./oauth.js";
import { overriddenWarnings } from "./overridden.js";
import { statePlanOf, tracingPlanOf } from "./settings.js";
import { stateDirOf } from "./state-dir.js";
import { checkInheritEnv } from "./stdio-env.js";
import { type Draft, implicitClash, implicitToolsets, makeToolset } from "./toolsets.js";
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
  const { upstreams, declared, failed } = compileUpstreams(files, complete, errors);
  errors.push(...checkInheritEnv(files));

  const drafts = new Map<string, Draft>();
  const mentioned = new Set<string>();
  /** Every member whose exposed name is known, for the collision check (see NameClaim). */
  const named: NameClaim[] = [];
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
          const failedAt = (p: Path) => broken.within(p) || unresolved.within(p);
          const whole = !failedAt(memberPath);
          // Only its title or description failed: its name is still checked against the others'.
          const nameOnly =
            !whole &&
            !broken.at(memberPath) &&
            typeof m === "object" &&
            !["tool", "prompt", "as"].some((k) => failedAt([...memberPath, k]));
          if (!whole && !nameOnly) return;
          const spec = nameOnly ? withoutText(m) : m;
          const member = makeMember(kind, spec, memberPath, file, declared, errors);
          if (!member) return;
          named.push({ toolset: key, member, textKnown: whole });
          if (whole && upstreams.has(member.upstream) && !draft.members.some((x) => sameMember(x, member)))
            draft.members.push(member);
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
  // An upstream whose spec failed would get its toolset all the same: its name may not clash either.
  for (const [name, { where: at }] of failed) {
    const clash = mentioned.has(name) ? undefined : implicitClash(name, at, drafts);
    if (clash) implicitErrors.push(clash);
  }
  if (knowsMentions) errors.push(...implicitErrors);
  if (auth) errors.push(...forwardedTokenErrors(upstreams.values()));
  else if (!files.some((f) => f.config.auth)) errors.push(...perUserWithoutAuth(upstreams.values()));
  errors.push(...adminErrors(files, auth));
  const finalUpstreams = new Map([...upstreams].map(([k, u]) => [k, { ...u, covered: mentioned.has(k) }]));
  errors.push(
    ...checkCollisions(named, (u) =>
      finalUpstreams.has(u) ? finalUpstreams.get(u)!.prefix : failed.get(u)?.prefix,
    ),
  );
  const clients = clientsOf(files, new Set(toolsets.map((t) => t.name)), errors);
  const name = files.find((f) => f.config.name !== undefined)?.config.name ?? "toolpacks";
  const state = statePlanOf(files, name, options.env ?? {}, errors);
  const tracing = tracingPlanOf(files, options.env ?? {}, errors);
  if (errors.length) return { ok: false, errors };

  const autoDefer = files.find((f) => f.config.search?.auto_over_tokens !== undefined)?.config.search;
  const instructions = files.map((f) => f.config.instructions?.trim()).filter((s): s is string => !!s);
  const warnings = overriddenWarnings(files);
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
    clients,
    ui: uiOf(files),
    upstreams: finalUpstreams,
    toolsets,
    toolset: new Map(toolsets.map((t) => [t.name, t])),
    ...(warnings.length ? { warnings } : {}),
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

/** A member entry without its title and description (they failed): what is left names it. */
function withoutText(m: MemberSpec | PromptSpec): MemberSpec | PromptSpec {
  if (typeof m !== "object") return m;
  const { title: _t, description: _d, ...rest } = m;
  return rest as MemberSpec | PromptSpec;
}

/** An upstream whose spec failed: where it is declared, and its `prefix:` when that is known. */
interface Failed {
  readonly where: string;
  readonly prefix: string | undefined;
}

/** Every upstream that compiles, and every name declared (a spec that failed still declares its name). */
function compileUpstreams(
  files: readonly LoadedFile[],
  complete: boolean,
  errors: ConfigError[],
): { upstreams: Map<string, Upstream>; declared: Declared; failed: Map<string, Failed> } {
  const upstreams = new Map<string, Upstream>();
  const failed = new Map<string, Failed>();
  const names = new Set<string>();
  let all = !complete;
  for (const file of files) {
    const { source, config, raw, broken } = file;
    if (broken.at(["upstreams"])) all = true;
    for (const [key, spec] of Object.entries(config.upstreams ?? {})) {
      const path = ["upstreams", key];
      names.add(key);
      // Its prefix is known unless it failed too (or the whole spec is not a mapping).
      const fail = () => {
        if (upstreams.has(key) || failed.has(key)) return;
        const prefixPath = [...path, "prefix"];
        const known =
          !!spec &&
          typeof spec === "object" &&
          !broken.within(prefixPath) &&
          !file.unresolved.within(prefixPath);
        const p = known ? (spec.prefix ?? "") : undefined;
        const prefix = typeof p === "string" && /^[A-Za-z0-9_.-]{0,64}$/.test(p) ? p : undefined;
        failed.set(key, { where: where(source.at(path, true), source.file), prefix });
      };
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
      if (broken.within(path)) {
        fail();
        continue;
      }
      const up = makeUpstream(key, spec, raw.upstreams?.[key] ?? spec, file, errors);
      if (!up) {
        fail();
        continue;
      }
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
  for (const name of upstreams.keys()) failed.delete(name);
  return { upstreams, declared: { names, all }, failed };
}
