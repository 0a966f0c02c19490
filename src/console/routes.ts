/**
 * @module The console's routes under its path (SPEC §17): the page and its files behind the Host/Origin check of
 * the MCP path, and its data (`api/toolsets`, `api/recheck/NAME`, `api/live`) behind the bearer check of
 * /toolsets as well. Everything it answers comes from a `ConsoleSource`; nothing runs while nobody asks.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import { deniedTo } from "../access.js";
import type { Principal } from "../auth/types.js";
import { WireError } from "../wire/errors.js";
import { Assets, encodingFor, SECURITY_HEADERS } from "./assets.js";
import { CallHistory } from "./history.js";
import { auditSink, livePayload } from "./live.js";
import { consolePayload } from "./payload.js";
import type { StdioLaunch } from "./snippets.js";
import type { Answer, ConsoleSource, ReportView } from "./source.js";
import type { ServerInfo } from "./wire.js";

const gz = promisify(gzip);

/** What the HTTP layer checks for the console, exactly as for its own routes. */
interface ConsoleGate {
  /** Why the request's Host or Origin is refused (DNS rebinding), or undefined: the MCP path's check. */
  rebinding(): string | undefined;
  /** The Host/Origin and bearer checks of /toolsets: the principal, or undefined once the refusal was sent. */
  admit(query: string): Promise<{ readonly principal: Principal | undefined } | undefined>;
}

export interface ConsoleRoutes {
  readonly path: string;
  /** Whether a request path is the console's. */
  owns(path: string): boolean;
  serve(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    query: string,
    gate: ConsoleGate,
  ): Promise<void>;
}

export interface ConsoleOptions {
  /** Where the console is served (`/ui`). */
  readonly path: string;
  /** Where MCP is served (`/mcp`): the URLs it spells. */
  readonly mcpPath: string;
  /** How this server starts over stdio on its own machine (loopback binds only): the stdio snippets. */
  readonly stdio?: Pick<StdioLaunch, "command" | "args" | "configs">;
  readonly now?: () => number;
}

/** Variable names the config reads from the environment (`${VAR}`), never their values. */
function variables(secrets: ReadonlyMap<string, string>): string[] {
  const names = [...secrets.values()].map((v) => /^\$\{([A-Za-z_][A-Za-z0-9_]*)/.exec(v)?.[1] ?? "");
  return [...new Set(names.filter(Boolean))].sort();
}

async function sendData(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  body: unknown,
): Promise<void> {
  const text = Buffer.from(JSON.stringify(body));
  const zipped = text.length > 1024 && encodingFor(req.headers["accept-encoding"]) !== "identity";
  const out = zipped ? await gz(text) : text;
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    "content-type": "application/json",
    "cache-control": "no-store",
    vary: "accept-encoding",
    ...(zipped ? { "content-encoding": "gzip" } : {}),
    "content-length": out.length,
  });
  res.end(out);
}

export function createConsole(source: ConsoleSource, options: ConsoleOptions): ConsoleRoutes {
  const base = options.path;
  const assets = new Assets();
  const history = new CallHistory();
  const now = options.now ?? Date.now;

  function server(): ServerInfo {
    const { catalog, settings } = source;
    return {
      name: settings.name,
      version: settings.version,
      mcp_path: options.mcpPath,
      ui_path: base,
      default_selection: settings.defaultSelection ?? null,
      ignore_query_keys: settings.ignoreKeys,
      toolsets_tool: settings.toolsetsTool,
      auth: catalog.auth ? "token" : "none",
      audit: auditSink(catalog),
      stdio: options.stdio
        ? { ...options.stdio, env: variables(catalog.secrets), noToolsetsTool: !settings.toolsetsTool }
        : null,
    };
  }

  async function answer(req: IncomingMessage, res: ServerResponse, query: string, a: Answer<ReportView>) {
    if (a instanceof WireError) {
      for (const [k, v] of Object.entries(a.headers ?? {})) res.setHeader(k, v);
      return sendData(req, res, a.status ?? 500, { error: a.message });
    }
    return sendData(req, res, 200, consolePayload(source, a, server(), query));
  }

  async function api(
    req: IncomingMessage,
    res: ServerResponse,
    rest: string,
    query: string,
    gate: ConsoleGate,
  ) {
    const who = await gate.admit(rest === "live" ? "" : query);
    if (!who) return;
    if (rest === "toolsets") return answer(req, res, query, await source.report(query, who.principal));
    if (rest.startsWith("recheck/")) {
      let name: string;
      try {
        name = decodeURIComponent(rest.slice("recheck/".length));
      } catch {
        name = "";
      }
      return answer(req, res, query, await source.recheck(query, name, who.principal));
    }
    if (rest === "live") {
      const denied = new Set(deniedTo(source.catalog, who.principal));
      const view = await source.live();
      return sendData(
        req,
        res,
        200,
        await livePayload(source.catalog, view, history, now(), denied, who.principal),
      );
    }
    return sendData(req, res, 404, { error: `no console route ${base}/api/${rest}` });
  }

  return {
    path: base,
    owns: (path) => path === base || path.startsWith(`${base}/`),
    async serve(req, res, path, query, gate) {
      const rest = path === base ? "" : path.slice(base.length + 1);
      if (req.method !== "GET") {
        req.resume();
        res.writeHead(405, { allow: "GET", "content-type": "application/json", ...SECURITY_HEADERS });
        res.end(JSON.stringify({ error: "the console answers GET only" }));
        return;
      }
      if (rest.startsWith("api/")) return api(req, res, rest.slice(4), query, gate);
      const problem = gate.rebinding();
      if (problem) return sendData(req, res, 403, { error: `Forbidden: ${problem}` });
      if (path === base) {
        // The page and its files are addressed relative to `<path>/`, so it also works under a proxy's prefix.
        const to = `${base.slice(base.lastIndexOf("/") + 1)}/${query ? `?${query}` : ""}`;
        res.writeHead(308, { location: to, ...SECURITY_HEADERS });
        res.end();
        return;
      }
      if (!assets.has(rest)) return sendData(req, res, 404, { error: `no console file ${path}` });
      return assets.send(rest, req, res);
    },
  };
}
