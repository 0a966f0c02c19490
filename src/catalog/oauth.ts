/** @module An upstream's `oauth:` block compiled: what the schema cannot say (cross-field rules, the transport). */
import { tokenSubject } from "../auth/static-tokens.js";
import type { AuthConfig } from "../auth/types.js";
import { type ConfigError, locate } from "../config/errors.js";
import type { LoadedFile } from "../config/load.js";
import type { UpstreamSpec } from "../config/types.js";
import { checkOAuthConfig } from "../oauth/config.js";
import type { OAuthUpstreamConfig } from "../oauth/types.js";
import type { Upstream } from "./types.js";

/** The checked block (undefined when absent or wrong; every problem is pushed onto `errors`). */
export function compileOAuth(
  key: string,
  spec: UpstreamSpec,
  file: LoadedFile,
  errors: ConfigError[],
): OAuthUpstreamConfig | undefined {
  if (spec.oauth === undefined) return undefined;
  const { source } = file;
  const path = ["upstreams", key, "oauth"];
  if (spec.url === undefined) {
    errors.push(
      source.error(
        path,
        "oauth applies to HTTP upstreams (url), not command",
        "a stdio server takes its credentials from env:",
        true,
      ),
    );
    return undefined;
  }
  // A value whose `${VAR}` failed is already reported.
  if (file.unresolved.within(path)) return undefined;
  const checked = checkOAuthConfig(spec.oauth, source, path);
  errors.push(...checked.errors);
  const authorization = Object.keys(spec.headers ?? {}).find((h) => h.toLowerCase() === "authorization");
  if (authorization) {
    errors.push(
      source.error(
        ["upstreams", key, "headers", authorization],
        `upstream "${key}" sets an Authorization header and oauth: toolpacks sends its own OAuth token`,
        "remove the header, or the oauth block",
        true,
      ),
    );
  }
  if (spec.forward_headers?.some((h) => h.toLowerCase() === "authorization")) {
    errors.push(
      source.error(
        ["upstreams", key, "forward_headers"],
        `upstream "${key}" forwards the client's Authorization header and has oauth: toolpacks sends its own OAuth token`,
        "forward the client's credential in another header, or remove the oauth block",
      ),
    );
  }
  return checked.config;
}

/** Without `auth:` toolpacks cannot tell principals apart: a per-user upstream could never be authorized. */
export function perUserWithoutAuth(upstreams: Iterable<Upstream>): ConfigError[] {
  const errors: ConfigError[] = [];
  for (const up of upstreams) {
    if (up.oauth?.mode !== "per-user") continue;
    errors.push({
      ...locate(up.where),
      message: `upstream "${up.name}" is oauth mode per-user, but toolpacks does not know who is asking (no auth:)`,
      hint: "add auth: with tokens (each with a subject), or use mode: shared",
    });
  }
  return errors;
}

/**
 * A shared upstream's `admins` name identities `auth:` can prove: `static:SUBJECT`, a token of `auth.tokens` with
 * that subject; `oauth:SUB`, a user of `auth.oauth`'s issuer. An administrator nobody can be would lock the start
 * page shut without a word.
 */
export function adminErrors(files: readonly LoadedFile[], auth: AuthConfig | undefined): ConfigError[] {
  const errors: ConfigError[] = [];
  const subjects = new Set(
    (auth?.tokens ?? []).map((t) =>
      typeof t === "string" ? tokenSubject(t) : (t.subject ?? tokenSubject(t.token)),
    ),
  );
  for (const { source, config, broken, unresolved } of files) {
    for (const [key, spec] of Object.entries(config.upstreams ?? {})) {
      const path = ["upstreams", key, "oauth", "admins"];
      const admins: unknown = spec?.oauth?.admins;
      if (!Array.isArray(admins) || broken.within(path) || unresolved.within(path)) continue;
      admins.forEach((a, i) => {
        if (typeof a !== "string") return;
        const at = [...path, i];
        if (!auth)
          errors.push(
            source.error(
              at,
              `upstreams.${key}.oauth.admins needs auth: (without it nobody signs in)`,
              "add auth:, or authorize with toolpacks login",
            ),
          );
        else if (a.startsWith("static:") && !subjects.has(a.slice(7)))
          errors.push(
            source.error(
              at,
              `no token of auth.tokens has the subject ${JSON.stringify(a.slice(7))}`,
              subjects.size
                ? `subjects: ${[...subjects].join(", ")}`
                : "give the administrator's token a subject",
            ),
          );
        else if (a.startsWith("oauth:") && !auth.oauth)
          errors.push(
            source.error(
              at,
              `${a} names a user of auth.oauth's issuer, but there is no auth.oauth`,
              "add auth.oauth, or name a static token's subject",
            ),
          );
      });
    }
  }
  return errors;
}
