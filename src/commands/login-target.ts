/**
 * @module Finds the upstream `toolpacks login NAME` is about, with its `oauth:` block, in the config files.
 * Until the schema has `oauth`, the block is checked here (src/oauth/config.ts) and the rest of each file by the
 * schema with the block set aside. Once the config layer owns `oauth`, this becomes a catalog lookup.
 */
import { readFileSync } from "node:fs";
import { type Env, interpolate } from "../config/env.js";
import type { ConfigError } from "../config/errors.js";
import { validateSource } from "../config/schema.js";
import { parseSource, type Source } from "../config/source.js";
import { checkOAuthConfig } from "../oauth/config.js";
import type { OAuthUpstream } from "../oauth/types.js";

type Upstreams = Record<string, Record<string, unknown>>;

const upstreamsOf = (data: unknown): Upstreams | undefined => {
  const u = (data as { upstreams?: unknown } | null)?.upstreams;
  return u && typeof u === "object" && !Array.isArray(u) ? (u as Upstreams) : undefined;
};

/** The file's data without any upstream's `oauth` key (what the schema knows today). */
function withoutOAuth(data: unknown): unknown {
  const ups = upstreamsOf(data);
  if (!ups) return data;
  const stripped = Object.fromEntries(
    Object.entries(ups).map(([name, spec]) => {
      if (!spec || typeof spec !== "object") return [name, spec];
      const { oauth: _, ...rest } = spec;
      return [name, rest];
    }),
  );
  return { ...(data as object), upstreams: stripped };
}

export function loginTarget(
  files: readonly string[],
  name: string,
  env: Env,
): { ok: true; upstream: OAuthUpstream } | { ok: false; errors: ConfigError[] } {
  const errors: ConfigError[] = [];
  let found: { source: Source; data: unknown } | undefined;
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      errors.push({
        file,
        line: 1,
        col: 1,
        message: `cannot read config: ${(err as NodeJS.ErrnoException).code}`,
      });
      continue;
    }
    const parsed = parseSource(file, text);
    errors.push(...parsed.errors);
    if (parsed.errors.length || parsed.source.data == null) continue;
    errors.push(
      ...validateSource({ ...parsed.source, data: withoutOAuth(parsed.source.data) }).map((f) => f.error),
    );
    const resolved = interpolate(parsed.source, env);
    errors.push(...resolved.errors);
    if (!found && upstreamsOf(resolved.data)?.[name]) found = { source: parsed.source, data: resolved.data };
  }
  if (errors.length) return { ok: false, errors };
  const where = { file: files.join(", "), line: 1, col: 1 };
  if (!found) return { ok: false, errors: [{ ...where, message: `no upstream named ${name}` }] };
  const spec = upstreamsOf(found.data)![name]!;
  const path = ["upstreams", name];
  if (typeof spec.url !== "string")
    return {
      ok: false,
      errors: [
        found.source.error(
          path,
          `upstream ${name} is not an HTTP upstream`,
          "OAuth applies to url: upstreams",
        ),
      ],
    };
  if (spec.oauth === undefined)
    return {
      ok: false,
      errors: [
        found.source.error(path, `upstream ${name} has no oauth block`, "add oauth: { mode: shared }"),
      ],
    };
  const checked = checkOAuthConfig(spec.oauth, found.source, [...path, "oauth"]);
  if (!checked.config) return { ok: false, errors: checked.errors };
  return { ok: true, upstream: { name, url: spec.url, oauth: checked.config } };
}
