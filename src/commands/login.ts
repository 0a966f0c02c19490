/** @module `toolpacks login UPSTREAM CONFIG...`: authorizes a shared OAuth upstream once and stores its tokens. */
import type { Command } from "commander";
import { AuditLog } from "../audit.js";
import { formatConfigError } from "../config/errors.js";
import { createLogger } from "../log.js";
import { bearerChallenge } from "../oauth/challenge.js";
import { OAuthClient } from "../oauth/client.js";
import { OAuthFlowError } from "../oauth/errors.js";
import { authChallenge } from "../oauth/fetch.js";
import { listenLoopback } from "../oauth/loopback.js";
import { scopesFor } from "../oauth/scopes.js";
import { EncryptedFileTokenStore } from "../oauth/store/file.js";
import { tokenKeyFromEnv } from "../oauth/store/key.js";
import type { OAuthUpstream } from "../oauth/types.js";
import { VERSION } from "../version.js";
import { grantReporter } from "./grant-report.js";
import { loginTarget } from "./login-target.js";

/** An unauthenticated MCP request: an upstream that needs authorization answers it with its challenge. */
async function probe(up: OAuthUpstream, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(up.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "toolpacks-login", version: VERSION },
      },
    }),
    signal: AbortSignal.timeout(15_000),
  });
}

interface LoginOptions {
  stateDir?: string;
  port: string;
  timeout: string;
}

async function login(name: string, files: string[], opts: LoginOptions): Promise<number> {
  const target = loginTarget(files, name, process.env);
  if (!target.ok) {
    for (const e of target.errors) process.stderr.write(`${formatConfigError(e)}\n`);
    return 1;
  }
  const up = target.upstream;
  if (up.oauth.mode !== "shared")
    throw new OAuthFlowError(
      "config",
      `upstream ${name} is per-user: each principal authorizes at /oauth/${name}/start on the served toolpacks, not with login`,
    );
  const key = tokenKeyFromEnv(process.env, "toolpacks login");
  // Where `serve` of the same config reads them: the config's state_dir (or its default).
  const stateDir = opts.stateDir ?? target.stateDir;
  const store = await EncryptedFileTokenStore.open(stateDir, key);

  const first = await probe(up);
  const header = authChallenge(first);
  await first.body?.cancel().catch(() => {});
  if (!header) {
    process.stdout.write(
      `${name} answered HTTP ${first.status} without asking for authorization: nothing to do\n`,
    );
    return 0;
  }
  const challenge = bearerChallenge(header);
  const machine = up.oauth.grant === "client_credentials";
  const loopback = machine ? undefined : await listenLoopback(Number(opts.port));
  // The operator replaces the grant every user's calls run in: said at warn and in the config's audit log.
  const logger = createLogger({ level: "warn" });
  const audit = new AuditLog(target.audit, { logger });
  const report = grantReporter(logger, () => audit);
  try {
    const client = new OAuthClient({
      store,
      upstream: (n) => (n === name ? up : undefined),
      redirectUri: loopback?.redirectUri ?? "http://127.0.0.1/oauth/callback",
      onGrant: report,
    });
    const d = await client.discover(up, challenge);
    if (machine) {
      await client.clientCredentials(
        up,
        "",
        d,
        scopesFor(up.oauth, d, challenge?.scope ? { challenged: challenge.scope } : {}),
      );
      report({ upstream: name, mode: "shared", action: "authorized", principal: "", via: "login" });
    } else {
      const url = await client.begin(name, undefined, {
        discovery: d,
        ...(challenge?.scope ? { challenged: challenge.scope } : {}),
      });
      process.stdout.write(`Open this URL in a browser to authorize ${name}:\n\n  ${url}\n\n`);
      process.stderr.write(`waiting for ${d.as.issuer} to redirect to ${loopback!.redirectUri} …\n`);
      await loopback!.callback((params) => client.complete(params), name, Number(opts.timeout) * 1000);
    }
    const check = await probe(up, await client.auth(name).headers());
    await check.body?.cancel().catch(() => {});
    if (authChallenge(check)) {
      process.stderr.write(`${name} still refuses the new token (HTTP ${check.status})\n`);
      return 1;
    }
    process.stdout.write(`authorized ${name} at ${d.as.issuer}; credentials stored in ${store.dir}\n`);
    return 0;
  } finally {
    await loopback?.close();
    await audit.end();
  }
}

export function registerLogin(program: Command): void {
  program
    .command("login")
    .description(
      "authorize a shared OAuth upstream once (browser via a loopback redirect, or client credentials)",
    )
    .argument("<upstream>", "the upstream's name in the config")
    .argument("<config...>", "packs.yaml files")
    .option(
      "--state-dir <dir>",
      "where encrypted credentials live (default: the config's state_dir, as serve uses it)",
    )
    .option("--port <port>", "loopback port for the redirect (0: any free port)", "0")
    .option("--timeout <seconds>", "how long to wait for the browser", "300")
    .action(async (upstream: string, files: string[], opts: LoginOptions) => {
      let code: number;
      try {
        code = await login(upstream, files, opts);
      } catch (err) {
        const message =
          err instanceof OAuthFlowError ? err.message : `login failed: ${(err as Error).message}`;
        process.stderr.write(`error: ${message}\n`);
        code = 1;
      }
      process.exitCode = code;
    });
}
