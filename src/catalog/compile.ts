/** @module Compiles validated files into one frozen Catalog; collects every error with its position. */

import { dirname, resolve as resolvePath } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { type ConfigError, closest, locate } from "../config/errors.js";
import type { LoadedFile } from "../config/load.js";
import type { MemberSpec, PromptSpec, ToolsetSpec, UpstreamSpec } from "../config/types.js";
import { checkCollisions } from "./collisions.js";
import { deepFreeze } from "./freeze.js";
import { globToRegExp, isGlob, NAME_RULE, nameProblem, parseRef, TOOL_NAME_RULE } from "./names.js";
import type { Catalog, Member, MemberKind, Toolset, Upstream } from "./types.js";

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

function makeUpstream(
  key: string,
  spec: UpstreamSpec,
  display: UpstreamSpec,
  file: LoadedFile,
  errors: ConfigError[],
): Upstream | undefined {
  const { source } = file;
  const path = ["upstreams", key];
  const before = errors.length;
  if (spec.url !== undefined && spec.command !== undefined) {
    errors.push(
      source.error(
        path,
        `upstream "${key}" has both url and command`,
        "keep one: url for HTTP, command for stdio",
        true,
      ),
    );
  } else if (spec.url === undefined && spec.command === undefined) {
    errors.push(
      source.error(
        path,
        `upstream "${key}" has neither url nor command`,
        "add url: (HTTP) or command: (stdio)",
        true,
      ),
    );
  }
  if (spec.url !== undefined) {
    let ok = false;
    try {
      ok = ["http:", "https:"].includes(new URL(spec.url).protocol);
    } catch {}
    if (!ok)
      errors.push(source.error([...path, "url"], `url ${JSON.stringify(display.url)} is not an http(s) URL`));
    for (const k of ["args", "env", "cwd"] as const) {
      if (spec[k] !== undefined)
        errors.push(
          source.error([...path, k], `${k} applies to stdio upstreams (command), not url`, undefined, true),
        );
    }
  }
  if (spec.url !== undefined && spec.header_env !== undefined) {
    errors.push(
      source.error(
        [...path, "header_env"],
        "header_env applies to stdio upstreams (command), not url",
        "use forward_headers: for an HTTP upstream",
        true,
      ),
    );
  }
  if (spec.command !== undefined && spec.forward_headers !== undefined) {
    errors.push(
      source.error(
        [...path, "forward_headers"],
        "forward_headers applies to HTTP upstreams (url), not command",
        "use header_env: to pass a header to a stdio server",
        true,
      ),
    );
  }
  if (spec.command !== undefined) {
    if (!spec.command.trim()) errors.push(source.error([...path, "command"], "command is empty"));
    if (spec.headers !== undefined) {
      errors.push(
        source.error(
          [...path, "headers"],
          "headers apply to HTTP upstreams (url), not command",
          "use env: for a stdio server's credentials",
          true,
        ),
      );
    }
  }
  if (spec.prefix !== undefined && spec.prefix !== "" && !/^[A-Za-z0-9_.-]{1,64}$/.test(spec.prefix)) {
    errors.push(source.error([...path, "prefix"], `prefix "${spec.prefix}" may hold only A-Z a-z 0-9 _ . -`));
  }
  if (errors.length > before) return undefined;
  const at = source.at(path, true);
  return {
    name: key,
    transport: spec.url !== undefined ? "http" : "stdio",
    ...(spec.url !== undefined ? { url: spec.url } : {}),
    headers: spec.headers ?? {},
    ...(spec.command !== undefined ? { command: spec.command } : {}),
    args: spec.args ?? [],
    env: spec.env ?? {},
    cwd: resolvePath(dirname(resolvePath(source.file)), spec.cwd ?? "."),
    prefix: spec.prefix ?? "",
    callTimeoutMs: (spec.call_timeout ?? 60) * 1000,
    connectTimeoutMs: (spec.connect_timeout ?? 30) * 1000,
    validateArguments: spec.validate_arguments ?? true,
    forwardHeaders: (spec.forward_headers ?? []).map((h) => h.toLowerCase()),
    headerEnv: Object.fromEntries(
      Object.entries(spec.header_env ?? {}).map(([h, v]) => [h.toLowerCase(), v]),
    ),
    isolation: spec.isolation ?? "shared",
    maxInstances: spec.max_instances ?? 16,
    ...(spec.capture ? { captureOverBytes: spec.capture.over_bytes } : {}),
    covered: false,
    display,
    where: where(at, source.file),
  };
}

function sameSpec(a: Upstream, b: Upstream): boolean {
  const strip = ({ where: _w, display: _d, ...rest }: Upstream) => rest;
  return isDeepStrictEqual(strip(a), strip(b));
}

function sameMember(a: Member, b: Member): boolean {
  return a.ref === b.ref && a.as === b.as && a.title === b.title && a.description === b.description;
}

function refOf(kind: MemberKind, ref: string): string {
  return kind === "tool" ? ref : `${kind}:${ref}`;
}

function makeMember(
  kind: MemberKind,
  spec: MemberSpec | PromptSpec,
  path: (string | number)[],
  file: LoadedFile,
  upstreams: ReadonlyMap<string, Upstream>,
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
  if (!upstreams.has(ref.upstream)) {
    const guess = closest(ref.upstream, upstreams.keys());
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

function where(p: { line: number; col: number }, file: string): string {
  return `${file}:${p.line}:${p.col}`;
}
