/**
 * @module What `serve` sets up for upstreams with `oauth:`: the encrypted token store under `state_dir` (refusing
 * to start without TOOLPACKS_TOKEN_KEY where a person authorizes), tickets for the links it hands out, and the
 * OAuth client the gateway and the HTTP pages share. Nothing at all without such upstreams.
 */
import type { AuditLog } from "../audit.js";
import type { Catalog } from "../catalog/types.js";
import { isLoopback } from "../http/guard.js";
import type { Logger } from "../log.js";
import { parseTokenKey, TOKEN_KEY_ENV } from "../oauth/store/key.js";
import { openTokenStore } from "../oauth/store/open.js";
import { Tickets } from "../oauth/ticket.js";
import { oauthUpstreamOf, UpstreamOAuth } from "../proxy/upstream-oauth.js";
import { grantReporter } from "./grant-report.js";

export interface ServeOAuth {
  readonly oauth: UpstreamOAuth;
  /** Once listening: the address, the base of the pages when no public URL is configured. */
  listening(base: string): void;
}

export async function serveOAuth(
  catalog: () => Catalog,
  env: NodeJS.ProcessEnv,
  options: {
    readonly served: boolean;
    readonly publicUrl?: string;
    readonly host: string;
    readonly logger: Logger;
    /** The gateway's audit log, once there is a gateway (grants change only after). */
    readonly audit?: () => AuditLog | undefined;
  },
): Promise<ServeOAuth | undefined> {
  const current = catalog();
  const upstreams = [...current.upstreams.keys()].flatMap((n) => oauthUpstreamOf(current, n) ?? []);
  const store = await openTokenStore(current.stateDir, env, upstreams);
  if (!store) return undefined;
  const key = env[TOKEN_KEY_ENV]?.trim() ? parseTokenKey(env[TOKEN_KEY_ENV]) : undefined;
  let base = options.publicUrl?.replace(/\/$/, "");
  const people = upstreams.filter((u) => (u.oauth.grant ?? "authorization_code") === "authorization_code");
  if (options.served && !base && people.length && !isLoopback(options.host))
    options.logger.warn(
      "OAuth upstreams need a person to authorize them, and the authorization server redirects back to this server: set --public-url (TOOLPACKS_PUBLIC_URL) to the address browsers reach it at",
      { upstreams: people.map((u) => u.name) },
    );
  const oauth = new UpstreamOAuth({
    store,
    catalog,
    ...(options.served ? { publicUrl: () => base ?? "http://127.0.0.1" } : {}),
    tickets: new Tickets(key),
    onGrant: grantReporter(options.logger, options.audit ?? (() => undefined)),
  });
  return {
    oauth,
    listening: (address) => {
      base ??= address;
    },
  };
}
