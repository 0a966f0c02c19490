/** @module `auth:` compiled: the accepted bearer tokens, and the upstreams that must not receive them. */
import { type ConfigError, locate } from "../config/errors.js";
import type { LoadedFile } from "../config/load.js";
import type { Upstream } from "./types.js";

/** Every file's tokens; a short one is an error at its item (one whose variable failed is skipped). */
export function tokensOf(files: readonly LoadedFile[], errors: ConfigError[]): string[] {
  const tokens: string[] = [];
  for (const { source, config, broken, unresolved } of files) {
    (config.auth?.tokens ?? []).forEach((token, i) => {
      const path = ["auth", "tokens", i];
      if (broken.within(path) || unresolved.within(path)) return;
      if (token.length < 8) {
        errors.push(
          source.error(
            path,
            "an auth token must be at least 8 characters",
            "check the variable it comes from",
          ),
        );
      } else tokens.push(token);
    });
  }
  return tokens;
}

/** With auth on, no upstream may be handed the client's Authorization header (it carries the proxy's token). */
export function forwardedTokenErrors(upstreams: Iterable<Upstream>): ConfigError[] {
  const errors: ConfigError[] = [];
  for (const up of upstreams) {
    if (up.forwardHeaders.includes("authorization") || "authorization" in up.headerEnv) {
      errors.push({
        ...locate(up.where),
        message: `upstream "${up.name}" forwards the Authorization header, which carries the proxy's own bearer token (auth: is on)`,
        hint: "let clients send the upstream's credential in another header, e.g. forward_headers: [x-upstream-token]",
      });
    }
  }
  return errors;
}
