/**
 * @module Refusing an exposed bind nobody secured: on an address other machines (and every web page a browser on
 * this network opens, through DNS rebinding) can reach, with no Host list and no bearer tokens, anyone could
 * drive the upstreams. `--insecure-bind` serves anyway.
 */
import { isLoopback } from "./guard.js";

export interface BindSetting {
  readonly host: string;
  /** `--allowed-host` values given (not the loopback defaults). */
  readonly allowedHosts: readonly string[];
  /** `auth:` asks for tokens. */
  readonly authenticated: boolean;
  readonly insecure: boolean;
}

/** Why this bind is refused, with the ways out; undefined when it may serve. */
export function bindProblem(s: BindSetting): string | undefined {
  if (s.insecure || isLoopback(s.host.toLowerCase()) || s.allowedHosts.length > 0 || s.authenticated)
    return undefined;
  return (
    `refusing to serve on ${s.host} without --allowed-host and without auth: any web page a browser opens could reach ` +
    "it through DNS rebinding, and anyone on the network could use its upstreams. Either name the host names " +
    "clients use (--allowed-host mcp.example.com, or TOOLPACKS_ALLOWED_HOSTS=mcp.example.com), or require bearer " +
    "tokens with auth: { tokens: [...] } in the config; --insecure-bind (TOOLPACKS_INSECURE_BIND=1) serves anyway"
  );
}

/** A yes/no environment variable: set to 1, true, yes or on. */
export function envFlag(value: string | undefined): boolean {
  return ["1", "true", "yes", "on"].includes((value ?? "").trim().toLowerCase());
}
