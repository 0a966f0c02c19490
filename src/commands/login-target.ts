/** @module The upstream `toolpacks login NAME` is about: compiled from the config files like every command's. */
import { loadCatalog } from "../catalog/load.js";
import type { AuditSettings } from "../catalog/types.js";
import type { Env } from "../config/env.js";
import { type ConfigError, locate } from "../config/errors.js";
import type { OAuthUpstream } from "../oauth/types.js";

export function loginTarget(
  files: readonly string[],
  name: string,
  env: Env,
):
  | { ok: true; upstream: OAuthUpstream; stateDir: string; audit: AuditSettings }
  | { ok: false; errors: readonly ConfigError[] } {
  const loaded = loadCatalog(files, env);
  if (!loaded.ok) return loaded;
  const { catalog } = loaded;
  const up = catalog.upstreams.get(name);
  if (!up) {
    const where = { file: files.join(", "), line: 1, col: 1 };
    return { ok: false, errors: [{ ...where, message: `no upstream named ${name}` }] };
  }
  if (up.transport !== "http" || !up.oauth) {
    return {
      ok: false,
      errors: [
        {
          ...locate(up.where),
          message:
            up.transport !== "http"
              ? `upstream ${name} is not an HTTP upstream`
              : `upstream ${name} has no oauth block`,
          hint: up.transport !== "http" ? "OAuth applies to url: upstreams" : "add oauth: { mode: shared }",
        },
      ],
    };
  }
  return {
    ok: true,
    upstream: { name, url: up.url!, oauth: up.oauth },
    stateDir: catalog.stateDir,
    audit: catalog.audit,
  };
}
