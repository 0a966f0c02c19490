/** @module `toolpacks serve`: HTTP or stdio, with reload and graceful shutdown. */
import { type Command, Option } from "commander";
import { parsePrincipalJson } from "../auth/requirements.js";
import type { Catalog } from "../catalog/types.js";
import { bindProblem, envFlag } from "../http/bind-check.js";
import { catalogOrExit } from "./common.js";
import { prespawnSelection } from "./serve-early.js";
import { limitProblem, list, publicUrlProblem, type ServeOptions, serveUi } from "./serve-options.js";

/** `early`: the catalog serve-early.ts compiled (and prespawned from) before commander loaded, if it could. */
export function registerServe(
  program: Command,
  early?: { readonly files: readonly string[]; readonly catalog: Catalog },
): void {
  program
    .command("serve")
    .description("serve the toolsets over Streamable HTTP (one URL, selection in the query) or stdio")
    .argument("<config...>", "packs.yaml files")
    .addOption(
      new Option("--transport <kind>", "streamable-http or stdio")
        .choices(["streamable-http", "stdio"])
        .default("streamable-http")
        .env("TOOLPACKS_TRANSPORT"),
    )
    .addOption(
      new Option("--host <host>", "interface to bind (0.0.0.0 must be asked for)")
        .default("127.0.0.1")
        .env("TOOLPACKS_HOST"),
    )
    .addOption(new Option("--port <port>", "port (0 picks a free one)").default("4040").env("TOOLPACKS_PORT"))
    .addOption(new Option("--path <path>", "where MCP is served").default("/mcp").env("TOOLPACKS_PATH"))
    .addOption(
      new Option(
        "--toolsets <selection>",
        "what a URL naming nothing gets, in URL spelling (over stdio: the whole selection)",
      ).env("TOOLPACKS_TOOLSETS"),
    )
    .addOption(
      list("--ignore-query-key <key>", "a query key that is not a toolset name (repeatable)").env(
        "TOOLPACKS_IGNORE_QUERY_KEYS",
      ),
    )
    .addOption(
      list(
        "--allowed-host <host>",
        "a Host name requests may carry (repeatable; default: loopback names when bound to loopback, else any)",
        (v) => v.toLowerCase(),
      ).env("TOOLPACKS_ALLOWED_HOSTS"),
    )
    .addOption(
      list(
        "--allowed-origin <origin>",
        "a browser Origin allowed besides the allowed hosts (repeatable)",
      ).env("TOOLPACKS_ALLOWED_ORIGINS"),
    )
    .option(
      "--insecure-bind",
      "serve on a non-loopback address without --allowed-host and without auth (env TOOLPACKS_INSECURE_BIND=1)",
    )
    .addOption(
      list(
        "--trusted-proxy <address>",
        "a reverse proxy (address or ADDRESS/PREFIX) whose X-Forwarded-For names the client, for per-client limits (repeatable)",
      ).env("TOOLPACKS_TRUSTED_PROXIES"),
    )
    .addOption(
      new Option("--max-sessions <n>", "open sessions in total (config limits.sessions; default 10000)").env(
        "TOOLPACKS_MAX_SESSIONS",
      ),
    )
    .addOption(
      new Option(
        "--max-sessions-per-client <n>",
        "open sessions of one client (config limits.sessions_per_client; default 1000)",
      ).env("TOOLPACKS_MAX_SESSIONS_PER_CLIENT"),
    )
    .addOption(
      new Option("--max-batch <n>", "messages in one JSON-RPC batch (config limits.batch; default 100)").env(
        "TOOLPACKS_MAX_BATCH",
      ),
    )
    .addOption(
      new Option(
        "--session-secret <secret>",
        "shared by replicas: signed session ids any replica can serve",
      ).env("TOOLPACKS_SESSION_SECRET"),
    )
    .addOption(
      new Option("--stateless", "no sessions: each request is served on its own").env("TOOLPACKS_STATELESS"),
    )
    .addOption(
      new Option(
        "--public-url <url>",
        "where browsers reach this server, for OAuth upstreams' authorization pages (default: the listening address)",
      ).env("TOOLPACKS_PUBLIC_URL"),
    )
    .addOption(
      new Option(
        "--as <claims>",
        'stdio only: who the session is, as JSON claims, for toolsets with requires: (\'{"scope":"a b","groups":["x"]}\')',
      ).env("TOOLPACKS_AS"),
    )
    .option(
      "--ui",
      "serve the browser console on any address (env TOOLPACKS_UI=1; default: on for loopback or auth:)",
    )
    .option("--no-ui", "do not serve the browser console (env TOOLPACKS_UI=0; config ui: false)")
    .addOption(
      new Option("--ui-path <path>", "where the browser console is served (default /ui; config ui.path)").env(
        "TOOLPACKS_UI_PATH",
      ),
    )
    .option("--watch", "reload when a config file changes (SIGHUP always reloads; env TOOLPACKS_WATCH=1)")
    .option(
      "--no-toolsets-tool",
      "do not offer the list_server_toolsets tool (env TOOLPACKS_TOOLSETS_TOOL=0)",
    )
    .addOption(
      new Option("--name <name>", "server name (default: the config's name, else toolpacks)").env(
        "TOOLPACKS_NAME",
      ),
    )
    .addOption(
      new Option("--session-idle-timeout <seconds>", "close sessions idle this long")
        .default("1800")
        .env("TOOLPACKS_SESSION_IDLE_TIMEOUT"),
    )
    .addOption(
      new Option(
        "--cache-ttl <seconds>",
        "how long 2026-07-28 clients may reuse tools/list, the other lists and server/discover (ttlMs)",
      )
        .default("60")
        .env("TOOLPACKS_CACHE_TTL"),
    )
    .addOption(
      new Option("--max-body-bytes <bytes>", "larger request bodies get 413")
        .default(String(4 * 1024 * 1024))
        .env("TOOLPACKS_MAX_BODY_BYTES"),
    )
    .addOption(
      new Option("--log-level <level>", "debug, info, warn, error")
        .choices(["debug", "info", "warn", "error"])
        .default("info")
        .env("TOOLPACKS_LOG_LEVEL"),
    )
    .addOption(
      new Option("--log-format <format>", "json or text (default: json unless stderr is a terminal)")
        .choices(["json", "text"])
        .env("TOOLPACKS_LOG_FORMAT"),
    )
    .action(async (files: string[], opts: ServeOptions) => {
      opts.watch ||= envFlag(process.env.TOOLPACKS_WATCH);
      opts.insecureBind ||= envFlag(process.env.TOOLPACKS_INSECURE_BIND);
      const bad = optionProblem(opts) ?? limitProblem(opts);
      if (bad) {
        process.stderr.write(`toolpacks serve: ${bad}\n`);
        process.exit(2);
      }
      const same =
        early && early.files.length === files.length && early.files.every((f, i) => f === files[i]);
      const catalog = same ? early.catalog : catalogOrExit(files);
      const exposed =
        opts.transport !== "stdio" &&
        bindProblem({
          host: opts.host,
          allowedHosts: opts.allowedHost,
          authenticated: catalog.auth !== undefined,
          insecure: opts.insecureBind === true,
        });
      const ui = opts.transport === "stdio" ? undefined : serveUi(opts, catalog);
      const refused = exposed || (ui && "problem" in ui ? ui.problem : undefined);
      if (refused) {
        process.stderr.write(`toolpacks serve: ${refused}\n`);
        process.exit(2);
      }
      // The start selection's stdio upstreams start now (if serve-early.ts could not), while the serving code loads.
      prespawnSelection(catalog, {
        stdio: opts.transport === "stdio",
        ...(opts.toolsets !== undefined ? { toolsets: opts.toolsets } : {}),
        ignoreKeys: opts.ignoreQueryKey,
      });
      const { runServe } = await import("./serve-run.js");
      await runServe(files, opts, catalog);
    });
}

/** Numeric options that would not work (NaN body limit, a 1 ms sweep, a port that is no port), or undefined. */
function optionProblem(opts: ServeOptions): string | undefined {
  const port = Number(opts.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) return `--port must be 0-65535, not ${opts.port}`;
  const body = Number(opts.maxBodyBytes);
  if (!Number.isInteger(body) || body < 1)
    return `--max-body-bytes must be a positive whole number, not ${opts.maxBodyBytes}`;
  const ttl = Number(opts.cacheTtl);
  if (!Number.isFinite(ttl) || ttl < 0)
    return `--cache-ttl must be 0 or more (seconds), not ${opts.cacheTtl}`;
  const idle = Number(opts.sessionIdleTimeout);
  if (!Number.isFinite(idle) || idle < 1)
    return `--session-idle-timeout must be at least 1 (seconds), not ${opts.sessionIdleTimeout}`;
  if (opts.as !== undefined) {
    if (opts.transport !== "stdio")
      return "--as is for stdio; over HTTP the client's token says who is asking";
    try {
      parsePrincipalJson(opts.as);
    } catch (err) {
      return (err as Error).message;
    }
  }
  return publicUrlProblem(opts.publicUrl);
}
