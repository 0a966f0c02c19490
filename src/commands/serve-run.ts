/** @module The serve command's body, loaded only when serving (the SDK, the HTTP layer, the pool). */
import { createServer } from "node:http";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parsePrincipalJson } from "../auth/requirements.js";
import type { Catalog } from "../catalog/types.js";
import { createConsole } from "../console/routes.js";
import { createFront, type Front } from "../door/front.js";
import { defaultAllowedHosts, isLoopback } from "../http/guard.js";
import { createHttpHandler, type HandlerOptions } from "../http/handler.js";
import { createLogger } from "../log.js";
import { packageFile } from "../paths.js";
import { reloadOn } from "../reload.js";
import { serveStdio } from "../stdio.js";
import { killUnadopted } from "../upstream/prespawn.js";
import { closeAgent } from "../upstream/transport.js";
import { VERSION } from "../version.js";
import { toolsetsToolOn } from "./common.js";
import { insecureBindWarning } from "./serve-bind.js";
import { serveOAuth } from "./serve-oauth.js";
import { limitOverrides, type ServeOptions, serveUi } from "./serve-options.js";
import { servedRoutes } from "./serve-routes.js";
import { openServing } from "./serve-state.js";

const OTHER_PORT = "another port: --port N or TOOLPACKS_PORT=N";

export async function runServe(files: string[], opts: ServeOptions, catalog: Catalog): Promise<void> {
  const logger = createLogger({
    level: opts.logLevel,
    ...(opts.logFormat ? { format: opts.logFormat } : {}),
  });
  for (const w of catalog.warnings ?? []) logger.warn(w);
  const exposed = insecureBindWarning(opts, catalog);
  if (exposed) logger.warn(exposed);
  const toolsetsTool = toolsetsToolOn(opts.toolsetsTool);
  const name = opts.name ?? catalog.name;
  const serving = await openServing(catalog, name, VERSION, logger);
  let front: Front | undefined;
  const oauth = await serveOAuth(() => front?.catalog ?? catalog, process.env, {
    served: opts.transport !== "stdio",
    host: opts.host,
    logger,
    audit: () => front?.audit,
    ...(opts.publicUrl ? { publicUrl: opts.publicUrl } : {}),
  }).catch((err: Error) => {
    // Per-user OAuth without TOOLPACKS_TOKEN_KEY, a store written with another key: refuse, saying why.
    process.stderr.write(`toolpacks serve: ${err.message}\n`);
    process.exit(1);
  });
  const served = createFront(
    catalog,
    {
      name,
      version: VERSION,
      // Over stdio the process serves the one client that launched it: every upstream instance is its own.
      ...(opts.transport === "stdio" ? { oneClient: true } : {}),
      ...(opts.transport !== "stdio" && opts.toolsets !== undefined
        ? { defaultSelection: opts.toolsets }
        : {}),
      ignoreKeys: opts.ignoreQueryKey,
      toolsetsTool,
      logger,
      // A stateless session lasts one request: a captured value would be gone before the client could use it
      // (even in a shared store: a 2025 stateless request has no owner that outlives it; see decision 17).
      capture: opts.stateless !== true,
      state: serving.state,
      tracing: serving.tracing,
      cacheTtlMs: Number(opts.cacheTtl) * 1000,
      ...(opts.sessionSecret ? { stateSecret: opts.sessionSecret } : {}),
      ...(oauth ? { oauth: oauth.oauth } : {}),
    },
    {
      path: opts.path,
      sessionIdleMs: Number(opts.sessionIdleTimeout) * 1000,
      sessionSecret: opts.sessionSecret,
      limits: limitOverrides(opts),
      trustedProxies: opts.trustedProxy,
    },
  );
  front = served;
  const stopReload = reloadOn(served, files, logger, opts.watch === true);
  // Warm what a bare URL gets (its upstreams were spawned already): the first session finds it ready.
  if (opts.transport !== "stdio") served.warm();
  let stopping: Promise<void> | undefined;
  const stop = (closeServer: () => Promise<void>) => {
    stopping ??= (async () => {
      logger.info("shutting down");
      stopReload();
      killUnadopted();
      await closeServer();
      await served.close();
      await serving.close();
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
      await serveStdio(served, opts.toolsets ?? "", opts.as ? parsePrincipalJson(opts.as) : undefined);
    } catch (err) {
      logger.error((err as Error).message);
      await stop(async () => {});
      process.exit(2);
    }
    await stop(async () => {});
    process.exit(0);
  }

  const publicHost = opts.publicUrl ? new URL(opts.publicUrl).hostname : undefined;
  const pages = oauth?.oauth.routes();
  const ui = serveUi(opts, catalog);
  // The stdio snippets start this CLI on this machine: offered only where the page is this machine's (loopback).
  const launch = { command: process.execPath, args: [fileURLToPath(packageFile("dist/cli.js"))] };
  const stdio = isLoopback(opts.host) ? { ...launch, configs: files.map((f) => resolve(f)) } : undefined;
  const uiRoutes = ui.on
    ? createConsole(served.console(), {
        path: ui.path,
        mcpPath: opts.path,
        ...(stdio ? { stdio } : {}),
      })
    : undefined;
  const handlerOptions: Partial<HandlerOptions> = {
    ...(pages ? { oauthPages: pages } : {}),
    ...(uiRoutes ? { console: uiRoutes } : {}),
    path: opts.path,
    maxBodyBytes: Number(opts.maxBodyBytes),
    stateless: opts.stateless === true,
    allowedOrigins: opts.allowedOrigin,
    ...(opts.allowedHost.length || (publicHost && defaultAllowedHosts(opts.host))
      ? {
          allowedHosts: [
            ...opts.allowedHost,
            ...(publicHost ? [publicHost] : []),
            ...(defaultAllowedHosts(opts.host) ?? []),
          ],
        }
      : defaultAllowedHosts(opts.host)
        ? { allowedHosts: defaultAllowedHosts(opts.host)! }
        : {}),
  };
  const handler = createHttpHandler(served, handlerOptions);
  const server = createServer((req, res) => {
    void handler(req, res).then((handled) => {
      if (!handled) {
        const routes = servedRoutes(handlerOptions, served.catalog);
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: "not found", routes }));
      }
    });
  });
  server.keepAliveTimeout = 65_000;
  const closeServer = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Sessions end first, so a request still waiting is answered ("Session closed before the answer").
    await served.close();
    server.closeAllConnections();
    await closed;
  };
  const onSignal = () => void stop(closeServer).then(() => process.exit(0));
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  server.on("error", (err: NodeJS.ErrnoException) => {
    const hint = err.code === "EADDRINUSE" ? ` (is toolpacks already running? ${OTHER_PORT})` : "";
    logger.error(`cannot listen: ${err.message}${hint}`);
    void stop(closeServer).then(() => process.exit(1));
  });
  server.listen(Number(opts.port), opts.host, () => {
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : opts.port;
    const host = opts.host.includes(":") ? `[${opts.host}]` : opts.host;
    oauth?.listening(`http://${host}:${port}`);
    logger.info(`listening on http://${host}:${port}${opts.path} (${OTHER_PORT})`, {
      name,
      toolsets: catalog.toolsets.length,
    });
    if (ui.on) logger.info(`console on http://${host}:${port}${ui.path}/`);
    else if ("why" in ui) logger.info(`console off: ${ui.why}`);
  });
}
