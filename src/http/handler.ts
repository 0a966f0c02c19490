/** @module The HTTP routes: the MCP path (Streamable HTTP), /toolsets, /healthz and /metrics. */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { ConsoleRoutes } from "../console/routes.js";
import { classifyPost } from "../modern/classify.js";
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "../protocol.js";
import type { Gateway } from "../proxy/gateway.js";
import { TooManyInstances } from "../upstream/pool.js";
import { type Admitted, HttpIdentity } from "./auth.js";
import { hostProblem, rebindingProblem } from "./guard.js";
import { sendHealth, sendReady } from "./health.js";
import { readMessages } from "./messages.js";
import { ModernEndpoint } from "./modern.js";
import { type OAuthPages, serveOAuth } from "./oauth-pages.js";
import { sendJson, sendRpcError } from "./replies.js";
import { type Entry, grantedTo, isRefusal, type Refusal, refuse } from "./session-entry.js";
import { handlerLimits, type LimitOverrides } from "./session-limits.js";
import { SessionTable } from "./sessions.js";

export interface HandlerOptions {
  /** Where MCP is served (default /mcp). */
  readonly path: string;
  /** Idle sessions are closed after this long (default 30 min). */
  readonly sessionIdleMs: number;
  /** Larger request bodies get 413 (default 4 MiB). */
  readonly maxBodyBytes: number;
  /** Serve GET /healthz and /readyz, GET /toolsets and GET /metrics (default true each). */
  readonly healthz: boolean;
  readonly toolsetsRoute: boolean;
  readonly metrics: boolean;
  /** Host names (no port) a request's Host may carry; undefined accepts any. See guard.ts. */
  readonly allowedHosts?: readonly string[];
  /** Origins a browser request may come from, besides those naming an allowed host. */
  readonly allowedOrigins?: readonly string[];
  /** Shared by replicas: session ids are signed and any replica can rebuild a session from one. */
  readonly sessionSecret?: string;
  /** No sessions: every request is served by a session made for it and closed after it. */
  readonly stateless: boolean;
  /** Limits that override the config's `limits:` (serve options). */
  readonly limits?: LimitOverrides;
  /** Proxies (addresses or ADDRESS/PREFIX) whose X-Forwarded-For names the client, for per-client limits. */
  readonly trustedProxies?: readonly string[];
  /** The OAuth pages for upstreams with `oauth:` (start, callback, client metadata) under /oauth/. */
  readonly oauthPages?: OAuthPages;
  /** The browser console (src/console) under its own path: its files behind the Host/Origin check, its data behind /toolsets' checks. */
  readonly console?: ConsoleRoutes;
}

export const defaultHandlerOptions: HandlerOptions = Object.freeze({
  path: "/mcp",
  sessionIdleMs: 30 * 60_000,
  maxBodyBytes: 4 * 1024 * 1024,
  healthz: true,
  toolsetsRoute: true,
  metrics: true,
  stateless: false,
});

/** 2026-07-28 contexts (selection × credentials) kept at once; past it the least recently used idle one goes. */
const MAX_CONTEXTS = 1024;

export interface McpHttpHandler {
  /** Handles a request; resolves false when the path is not ours (so a host app can route it elsewhere). */
  (req: IncomingMessage, res: ServerResponse): Promise<boolean>;
  readonly sessionCount: () => number;
  close(): Promise<void>;
}

export function createHttpHandler(gateway: Gateway, partial: Partial<HandlerOptions> = {}): McpHttpHandler {
  const options = { ...defaultHandlerOptions, ...partial };
  const bounds = handlerLimits(gateway, options.limits, options.trustedProxies ?? []);
  const table = new SessionTable(gateway, {
    sessionIdleMs: options.sessionIdleMs,
    ...(options.sessionSecret ? { sessionSecret: options.sessionSecret } : {}),
    ...bounds,
  });
  const modern = new ModernEndpoint(gateway, {
    idleMs: options.sessionIdleMs,
    maxContexts: MAX_CONTEXTS,
    limits: table.limits,
  });
  const log = gateway.logger;
  const identity = new HttpIdentity(log, options.path, gateway.options.ignoreKeys);

  async function post(
    req: IncomingMessage,
    res: ServerResponse,
    query: string,
    who: Admitted,
  ): Promise<void> {
    const read = await readMessages(req, res, options.maxBodyBytes, bounds.limits().batch);
    if (!read) return;
    const { messages, batch } = read;
    // The body decides the era (SPEC §12.1): a request with the 2026-07-28 envelope has no session.
    const era = classifyPost(req.headers, batch ? messages : messages[0]);
    if (era.era === "refused") {
      const id = batch ? null : ((messages[0] as { id?: string | number }).id ?? null);
      return sendRpcError(
        res,
        era.refusal.status,
        era.refusal.code,
        era.refusal.message,
        {},
        id,
        era.refusal.data,
      );
    }
    if (era.era === "2026-07-28") {
      if (era.kind === "notification") {
        res.writeHead(202).end();
        return;
      }
      // Each request is its own initialize here: its principal narrows the URL's selection, step-up included.
      if (identity.stepUp(gateway.catalog, who.principal, query, res)) return;
      const m = messages[0] as { id: string | number; method: string; params?: Record<string, unknown> };
      return modern.serve(req, res, query, m, era.envelope, who.principal);
    }
    const init = messages.find((m) => (m as { method?: string }).method === "initialize") as
      | { params?: Record<string, unknown> }
      | undefined;
    if (init && messages.length > 1) {
      sendRpcError(res, 400, -32600, "Invalid Request: initialize must be sent alone");
      return;
    }
    if ((init || options.stateless) && identity.stepUp(gateway.catalog, who.principal, query, res)) return;
    if (options.stateless) return stateless(req, res, query, messages, batch, init !== undefined, who);
    let entry: Entry | Refusal;
    if (init) entry = await table.open(req, query, { seed: init.params ?? {}, principal: who.principal });
    else entry = await table.find(req, who.principal);
    if (isRefusal(entry)) return refuse(res, entry);
    if (!init && identity.stillMeets(gateway.catalog, who.principal, grantedTo(gateway, entry), res)) return;
    entry.transport.handlePost(req, res, messages, batch);
  }

  /** Stateless: a session made for this one request (its initialize replayed unless it is one), closed after. */
  async function stateless(
    req: IncomingMessage,
    res: ServerResponse,
    query: string,
    messages: JSONRPCMessage[],
    batch: boolean,
    isInit: boolean,
    who: Admitted,
  ): Promise<void> {
    if (!messages.some((m) => "method" in m && "id" in m)) {
      res.writeHead(202).end();
      return;
    }
    const version = req.headers["mcp-protocol-version"];
    if (typeof version === "string" && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      sendRpcError(res, 400, -32000, `Bad Request: unsupported protocol version ${version}`);
      return;
    }
    const params = isInit
      ? undefined
      : {
          protocolVersion: typeof version === "string" ? version : LATEST_PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: "stateless-client", version: "0" },
        };
    const entry = await table.open(req, query, {
      stateless: true,
      id: randomUUID(),
      principal: who.principal,
      ...(params ? { params } : {}),
    });
    if (isRefusal(entry)) return refuse(res, entry);
    res.once("close", () => void gateway.closeSession(entry.session));
    entry.transport.handlePost(req, res, messages, batch);
  }

  async function mcp(req: IncomingMessage, res: ServerResponse, query: string, who: Admitted): Promise<void> {
    if (req.method === "POST") return post(req, res, query, who);
    if (options.stateless || (req.method !== "GET" && req.method !== "DELETE")) {
      sendRpcError(res, 405, -32000, "Method Not Allowed", {
        allow: options.stateless ? "POST" : "GET, POST, DELETE",
      });
      req.resume();
      return;
    }
    if (req.method === "GET" && !(req.headers.accept ?? "").includes("text/event-stream")) {
      sendRpcError(res, 406, -32000, "Not Acceptable: GET needs Accept: text/event-stream");
      return;
    }
    const entry = await table.find(req, who.principal);
    if (isRefusal(entry)) return refuse(res, entry);
    if (identity.stillMeets(gateway.catalog, who.principal, grantedTo(gateway, entry), res)) return;
    if (req.method === "GET") return entry.transport.handleGet(res);
    await table.drop(entry.transport.sessionId);
    res.writeHead(200).end();
  }

  async function toolsets(
    req: IncomingMessage,
    res: ServerResponse,
    query: string,
    who: Admitted,
  ): Promise<void> {
    if (identity.stepUp(gateway.catalog, who.principal, query, res)) return;
    const selected = gateway.select(query, who.principal);
    if (!selected.ok) {
      sendJson(res, 400, { error: selected.error });
      return;
    }
    try {
      sendJson(res, 200, await gateway.reportFor(selected.selection, req.headers, who.principal));
    } catch (err) {
      if (!(err instanceof TooManyInstances)) throw err;
      sendRpcError(res, 503, -32000, `Service Unavailable: ${err.message}`, { "retry-after": "30" });
    }
  }

  /** Host/Origin and bearer checks for everything but /healthz; the principal when the request may go on. */
  async function admitted(
    req: IncomingMessage,
    res: ServerResponse,
    query: string,
  ): Promise<Admitted | undefined> {
    const problem = rebindingProblem(req, options.allowedHosts, options.allowedOrigins);
    if (problem) {
      sendRpcError(res, 403, -32000, `Forbidden: ${problem}`);
      req.resume();
      return undefined;
    }
    return identity.admit(gateway.catalog, req, res, query);
  }

  /** The MCP path, /toolsets and /metrics: each request authenticated on its own. */
  async function guarded(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    query: string,
  ): Promise<void> {
    const who = await admitted(req, res, path === "/metrics" ? "" : query);
    if (!who) return;
    if (path === options.path) return mcp(req, res, query, who);
    if (path === "/toolsets") return toolsets(req, res, query, who);
    const text = await gateway.metrics.text();
    res.writeHead(200, { "content-type": gateway.metrics.registry.contentType });
    res.end(text);
  }

  const handler = async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    // Mounted under a prefix in Express, req.url loses it; the original URL keeps it.
    const url = (req as { originalUrl?: string }).originalUrl ?? req.url ?? "/";
    const q = url.indexOf("?");
    const path = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? "" : url.slice(q + 1);
    const get = req.method === "GET";
    const metadata = (get || req.method === "OPTIONS") && identity.isMetadataPath(gateway.catalog, path);
    const ours =
      metadata ||
      path === options.path ||
      (get && (path === "/healthz" || path === "/readyz") && options.healthz) ||
      (get && path === "/toolsets" && options.toolsetsRoute) ||
      (get && path === "/metrics" && options.metrics) ||
      (options.oauthPages !== undefined && path.startsWith("/oauth/")) ||
      options.console?.owns(path) === true;
    if (!ours) return false;
    const rid = req.headers["x-request-id"];
    if (typeof rid !== "string" || !/^[\w.:-]{1,128}$/.test(rid)) req.headers["x-request-id"] = randomUUID();
    try {
      if (path === "/healthz") sendHealth(res, gateway.options.name, table.size, gateway.state);
      else if (path === "/readyz") sendReady(res, gateway.state);
      else if (metadata) {
        const problem = hostProblem(req, options.allowedHosts);
        if (problem) sendRpcError(res, 403, -32000, `Forbidden: ${problem}`);
        else identity.serveMetadata(gateway.catalog, req, res);
      } else if (options.oauthPages && path.startsWith("/oauth/")) {
        // Open without a token (a browser has none); a valid one, when sent, says whom the start page acts for.
        const problem = rebindingProblem(req, options.allowedHosts, options.allowedOrigins);
        const who = problem ? undefined : await identity.identify(gateway.catalog, req);
        await serveOAuth(req, res, url, options.oauthPages, who, problem);
      } else if (options.console?.owns(path)) {
        const gate = { rebinding: () => rebindingProblem(req, options.allowedHosts, options.allowedOrigins) };
        await options.console.serve(req, res, path, query, { ...gate, admit: (q) => admitted(req, res, q) });
      } else await guarded(req, res, path, query);
    } catch (err) {
      log.error("request failed", {
        error: (err as Error).message,
        path,
        request_id: req.headers["x-request-id"],
      });
      if (!res.headersSent) sendRpcError(res, 500, -32603, "Internal error");
      else res.end();
    }
    return true;
  };

  return Object.assign(handler, {
    sessionCount: () => table.size,
    close: async () => {
      await modern.close();
      await table.close();
      identity.close();
    },
  });
}
