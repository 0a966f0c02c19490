/** @module `auth:` compiled: static tokens and the resource server, checked with positions; and what must never get the client's token. */
import { type AuthProblem, checkAuthConfig } from "../auth/config-check.js";
import type { AuthConfig, StaticTokenConfig } from "../auth/types.js";
import { type ConfigError, locate } from "../config/errors.js";
import type { LoadedFile } from "../config/load.js";
import type { Upstream } from "./types.js";
import { where } from "./where.js";

type Token = string | StaticTokenConfig;

/** The token's own path: the item for a bare string, its `token` key for a mapping. */
const tokenPath = (t: unknown, i: number) =>
  t && typeof t === "object" ? ["auth", "tokens", i, "token"] : ["auth", "tokens", i];

/**
 * Every file's `auth:` as one config: the tokens of all files, the `oauth` of the one file that declares it
 * (two different ones are an error naming both). Undefined when no file has `auth:`. Problems the schema
 * cannot see become `FILE:LINE:COL` errors; a value whose `${VAR}` failed, or that failed the schema, is
 * skipped rather than reported again.
 */
export function authOf(files: readonly LoadedFile[], errors: ConfigError[]): AuthConfig | undefined {
  if (!files.some((f) => f.config.auth)) return undefined;
  const tokens: Token[] = [];
  const seen = new Map<string, string>();
  let oauth: { config: AuthConfig["oauth"]; where: string } | undefined;
  for (const { source, config, broken, unresolved } of files) {
    const auth = config.auth;
    if (!auth) continue;
    const skipped = (path: readonly (string | number)[]) => broken.within(path) || unresolved.within(path);
    const kept: { token: Token; index: number }[] = [];
    (auth.tokens ?? []).forEach((token, index) => {
      if (!skipped(["auth", "tokens", index])) kept.push({ token, index });
    });
    const mine: AuthConfig = {
      tokens: kept.map((k) => k.token),
      ...(auth.oauth && !skipped(["auth", "oauth"]) ? { oauth: auth.oauth } : {}),
    };
    // Nothing left to check: the schema or a variable already said why.
    if (mine.oauth || kept.length) {
      for (const p of checkAuthConfig(mine))
        errors.push(source.error(remap(p, kept), p.message, p.hint ?? hintFor(p)));
    }
    kept.forEach(({ token, index }) => {
      const value = typeof token === "string" ? token : token.token;
      const here = where(source.at(tokenPath(token, index)), source.file);
      const first = seen.get(value);
      if (first && !first.startsWith(`${source.file}:`)) {
        errors.push({
          ...locate(here),
          message: `this token is listed again (first at ${first})`,
          hint: "each token once",
        });
      } else if (!first) seen.set(value, here);
      tokens.push(token);
    });
    if (mine.oauth) {
      const here = where(source.at(["auth", "oauth"], true), source.file);
      if (!oauth) oauth = { config: mine.oauth, where: here };
      else if (JSON.stringify(oauth.config) !== JSON.stringify(mine.oauth)) {
        errors.push(
          source.error(
            ["auth", "oauth"],
            `auth.oauth is declared again differently (first at ${oauth.where})`,
            "declare the resource server in one file",
            true,
          ),
        );
      }
    }
  }
  return { ...(tokens.length ? { tokens } : {}), ...(oauth?.config ? { oauth: oauth.config } : {}) };
}

/** A problem's YAML path, with a token's index put back to where it was written. */
function remap(p: AuthProblem, kept: readonly { index: number }[]): (string | number)[] {
  const path = [...p.path];
  if (path[1] === "tokens" && typeof path[2] === "number") path[2] = kept[path[2]]?.index ?? path[2];
  return path;
}

function hintFor(p: AuthProblem): string | undefined {
  return p.path[1] === "tokens" ? "check the variable it comes from" : undefined;
}

/** With auth on, no upstream may be handed the client's Authorization header (it carries the proxy's token). */
export function forwardedTokenErrors(upstreams: Iterable<Upstream>): ConfigError[] {
  const errors: ConfigError[] = [];
  for (const up of upstreams) {
    if (up.forwardHeaders.includes("authorization") || "authorization" in up.headerEnv) {
      errors.push({
        ...locate(up.where),
        message: `upstream "${up.name}" forwards the Authorization header, which carries the client's token for toolpacks itself (auth: is on)`,
        hint: "let clients send the upstream's credential in another header, e.g. forward_headers: [x-upstream-token]",
      });
    }
  }
  return errors;
}
