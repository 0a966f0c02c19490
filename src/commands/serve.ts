/** @module `toolpacks serve`: HTTP or stdio, with reload and graceful shutdown. */
import { createServer } from "node:http";
import { type Command, Option } from "commander";
import { defaultAllowedHosts } from "../http/guard.js";
import { createHttpHandler } from "../http/handler.js";
import { createLogger, type Level } from "../log.js";
import { Gateway } from "../proxy/gateway.js";
import { reloadOn } from "../reload.js";
import { serveStdio } from "../stdio.js";
import { closeAgent } from "../upstream/transport.js";
import { VERSION } from "../version.js";
import { catalogOrExit } from "./common.js";

interface ServeOptions {
  transport: "streamable-http" | "stdio";
  host: string;
  port: string;
  path: string;
  toolsets?: string;
  ignoreQueryKey: string[];
  toolsetsTool: boolean;
  name?: string;
  sessionIdleTimeout: string;
  maxBodyBytes: string;
  logLevel: Level;
  allowedHost: string[];
  watch?: boolean;
  sessionSecret?: string;
  stateless?: boolean;
  allowedOrigin: string[];
  logFormat?: "json" | "text";
}

export function registerServe(program: Command): void {
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
    .option(
      "--ignore-query-key <key>",
      "a query key that is not a toolset name (repeatable)",
      (v: string, all: string[]) => [...all, v],
      [],
    )
    .option(
      "--allowed-host <host>",
      "a Host name requests may carry (repeatable; default: loopback names when bound to loopback, else any)",
      (v: string, all: string[]) => [...all, v.toLowerCase()],
      [],
    )
    .option(
      "--allowed-origin <origin>",
      "a browser Origin allowed besides the allowed hosts (repeatable)",
      (v: string, all: string[]) => [...all, v],
      [],
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
    .option("--watch", "reload when a config file changes (SIGHUP always reloads)")
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
      const catalog = catalogOrExit(files);
      const logger = createLogger({
        level: opts.logLevel,
        ...(opts.logFormat ? { format: opts.logFormat } : {}),
      });
      const toolsetsTool = opts.toolsetsTool && process.env.TOOLPACKS_TOOLSETS_TOOL !== "0";
      const name = opts.name ?? catalog.name;
      const gateway = new Gateway(catalog, {
        name,
        version: VERSION,
        ...(opts.transport !== "stdio" && opts.toolsets !== undefined
          ? { defaultSelection: opts.toolsets }
          : {}),
        ignoreKeys: opts.ignoreQueryKey,
        toolsetsTool,
        logger,
      });
      const stopReload = reloadOn(gateway, files, logger, opts.watch === true);
      let stopping: Promise<void> | undefined;
      const stop = (closeServer: () => Promise<void>) => {
        stopping ??= (async () => {
          logger.info("shutting down");
          stopReload();
          await closeServer();
          await gateway.close();
          await closeAgent();
          logger.info("stopped");
        })();
        return stopping;
      };

      if (opts.transport === "stdio") {
        const onSignal = () => void stop(async () => {}).then(() => process.exit(0));
        process.once("SIGINT", onSignal);
        process.once("SIGTERM", onSignal);
        try {
          await serveStdio(gateway, opts.toolsets ?? "");
        } catch (err) {
          logger.error((err as Error).message);
          await stop(async () => {});
          process.exit(2);
        }
        await stop(async () => {});
        process.exit(0);
      }

      const handler = createHttpHandler(gateway, {
        path: opts.path,
        sessionIdleMs: Number(opts.sessionIdleTimeout) * 1000,
        maxBodyBytes: Number(opts.maxBodyBytes),
        stateless: opts.stateless === true,
        ...(opts.sessionSecret ? { sessionSecret: opts.sessionSecret } : {}),
        allowedOrigins: opts.allowedOrigin,
        ...(opts.allowedHost.length
          ? { allowedHosts: [...opts.allowedHost, ...(defaultAllowedHosts(opts.host) ?? [])] }
          : defaultAllowedHosts(opts.host)
            ? { allowedHosts: defaultAllowedHosts(opts.host)! }
            : {}),
      });
      const server = createServer((req, res) => {
        void handler(req, res).then((handled) => {
          if (!handled) {
            res.writeHead(404, { "content-type": "application/json" });
            res.end(JSON.stringify({ error: "not found", routes: [opts.path, "/toolsets", "/healthz"] }));
          }
        });
      });
      server.keepAliveTimeout = 65_000;
      const closeServer = async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        await handler.close();
        server.closeAllConnections();
        await closed;
      };
      const onSignal = () => void stop(closeServer).then(() => process.exit(0));
      process.once("SIGINT", onSignal);
      process.once("SIGTERM", onSignal);
      server.on("error", (err) => {
        logger.error(`cannot listen: ${err.message}`);
        void stop(closeServer).then(() => process.exit(1));
      });
      server.listen(Number(opts.port), opts.host, () => {
        const address = server.address();
        const port = typeof address === "object" && address ? address.port : opts.port;
        const host = opts.host.includes(":") ? `[${opts.host}]` : opts.host;
        logger.info(`listening on http://${host}:${port}${opts.path}`, {
          name,
          toolsets: catalog.toolsets.length,
        });
      });
    });
}
