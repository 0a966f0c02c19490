/** @module What `serve` says about an address it was told to serve on unsecured (`--insecure-bind`). */
import type { Catalog } from "../catalog/types.js";
import { bindProblem } from "../http/bind-check.js";
import type { ServeOptions } from "./serve-options.js";

/**
 * The warning for a bind `--insecure-bind` let through: one that would be refused without it (a non-loopback
 * address, no `--allowed-host`, no `auth:`). Undefined when the flag changed nothing.
 */
export function insecureBindWarning(
  opts: Pick<ServeOptions, "transport" | "host" | "allowedHost" | "insecureBind">,
  catalog: Pick<Catalog, "auth">,
): string | undefined {
  if (opts.transport === "stdio" || !opts.insecureBind) return undefined;
  const refused = bindProblem({
    host: opts.host,
    allowedHosts: opts.allowedHost,
    authenticated: catalog.auth !== undefined,
    insecure: false,
  });
  if (!refused) return undefined;
  return (
    `serving on ${opts.host} with --insecure-bind, without --allowed-host and without auth: any web page a ` +
    "browser opens could reach it through DNS rebinding, and anyone on the network can use its upstreams " +
    "(name the host names clients use with --allowed-host, or require bearer tokens with auth:)"
  );
}
