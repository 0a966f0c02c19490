/** @module Checks of the `auth:` block the schema cannot express; findings carry a YAML path, never a secret. */
import { isAcceptableUrl } from "./discovery.js";
import { DEFAULT_ALGORITHMS } from "./jwt.js";
import type { AuthConfig, Requires } from "./types.js";

export interface AuthProblem {
  /** Where in the YAML: `["auth", "oauth", "issuer"]`, `["auth", "tokens", 2]`. */
  readonly path: readonly (string | number)[];
  readonly message: string;
  readonly hint?: string;
}

const MIN_TOKEN_LENGTH = 8;
const ALLOWED_ALGORITHMS = new Set(DEFAULT_ALGORITHMS);

/** Every problem of the block at once (the compiler turns each into `FILE:LINE:COL: message (hint)`). */
export function checkAuthConfig(config: AuthConfig): AuthProblem[] {
  const out: AuthProblem[] = [];
  const at = (path: (string | number)[], message: string, hint?: string) =>
    out.push({ path: ["auth", ...path], message, ...(hint ? { hint } : {}) });

  if ((config.tokens ?? []).length === 0 && !config.oauth) {
    at([], "auth: needs tokens, oauth, or both", "remove auth: to serve without authentication");
  }
  const seen = new Set<string>();
  (config.tokens ?? []).forEach((t, i) => {
    const token = typeof t === "string" ? t : t.token;
    if (token.length < MIN_TOKEN_LENGTH) {
      at(
        typeof t === "string" ? ["tokens", i] : ["tokens", i, "token"],
        "an auth token must be at least 8 characters",
      );
    }
    if (/\s/.test(token)) at(["tokens", i], "an auth token cannot contain white space");
    if (seen.has(token)) at(["tokens", i], "this token is listed twice", "each token once");
    seen.add(token);
    if (typeof t !== "string" && t.scopes?.length === 0) {
      at(
        ["tokens", i, "scopes"],
        "an empty scope list grants nothing",
        "list scopes, or leave scopes out for all",
      );
    }
  });

  const o = config.oauth;
  if (!o) return out;
  if (!isAcceptableUrl(o.issuer)) {
    at(["oauth", "issuer"], "the issuer must be an https URL (http only on loopback)");
  }
  if (!isAcceptableUrl(o.audience) || new URL(o.audience).search) {
    at(
      ["oauth", "audience"],
      "the audience must be this server's https URL, without query or fragment",
      "e.g. https://mcp.example.com/mcp",
    );
  }
  if (o.jwks_uri !== undefined && !isAcceptableUrl(o.jwks_uri)) {
    at(["oauth", "jwks_uri"], "jwks_uri must be an https URL (http only on loopback)");
  }
  if (o.introspection && !isAcceptableUrl(o.introspection.url)) {
    at(["oauth", "introspection", "url"], "the introspection url must be https (http only on loopback)");
  }
  (o.algorithms ?? []).forEach((alg, i) => {
    if (!ALLOWED_ALGORITHMS.has(alg)) {
      at(
        ["oauth", "algorithms", i],
        `algorithm "${alg}" is not accepted for access tokens`,
        `use asymmetric ones: ${DEFAULT_ALGORITHMS.join(", ")}`,
      );
    }
  });
  if (o.algorithms?.length === 0) at(["oauth", "algorithms"], "an empty algorithm list accepts no token");
  (o.scopes_supported ?? []).forEach((s, i) => {
    if (s === "offline_access") {
      at(
        ["oauth", "scopes_supported", i],
        "offline_access is not a resource scope",
        "leave it out: clients add it themselves when the issuer offers it",
      );
    } else if (!/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(s)) {
      at(["oauth", "scopes_supported", i], `"${s}" is not a valid scope (RFC 6749 §3.3)`);
    }
  });
  return out;
}

/**
 * Problems of one toolset's `requires:`: empty lists, bad scope tokens, and any `requires:` at all
 * while no `auth:` is configured (nobody could ever meet it).
 */
export function checkRequires(requires: Requires, authConfigured: boolean): AuthProblem[] {
  const out: AuthProblem[] = [];
  if (!authConfigured) {
    out.push({
      path: ["requires"],
      message: "requires: needs auth: (without it no request has an identity)",
      hint: "configure auth.oauth or auth.tokens, or remove requires:",
    });
  }
  if (requires.scopes?.length === 0)
    out.push({ path: ["requires", "scopes"], message: "an empty scope list" });
  (requires.scopes ?? []).forEach((s, i) => {
    if (!/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(s)) {
      out.push({ path: ["requires", "scopes", i], message: `"${s}" is not a valid scope (RFC 6749 §3.3)` });
    }
  });
  for (const [claim, values] of Object.entries(requires.claims ?? {})) {
    if (values.length === 0)
      out.push({ path: ["requires", "claims", claim], message: "an empty claim value list" });
  }
  if (!requires.scopes && Object.keys(requires.claims ?? {}).length === 0) {
    out.push({ path: ["requires"], message: "requires: names neither scopes nor claims" });
  }
  return out;
}
