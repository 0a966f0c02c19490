/** @module The HTTP routes: the MCP path (Streamable HTTP), /toolsets, /healthz and /metrics. */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { classifyPost } from "../modern/classify.js";
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "../protocol.js";
import type { Gateway } from "../proxy/gateway.js";
import { TooManyInstances } from "../upstream/pool.js";
import { authorized } from "./auth.js";
import { rebindingProblem } from "./guard.js";
import { readMessages } from "./messages.js";
import { ModernEndpoint } from "./modern.js";
import { sendJson, sendRpcError } from "./replies.js";
import { type Entry, isRefusal, type Refusal, SessionTable } from "./sessions.js";

export interface HandlerOptions {
  /** Where MCP is served (default /mcp). */
  readonly path: string;
  /** Idle sessions are closed after this long (default 30 min). */
  readonly sessionIdleMs: number;
  /** Larger request bodies get 413 (default 4 MiB). */
  readonly maxBodyBytes: number;
  /** Serve GET /healthz, GET /toolsets and GET /metrics (default true each). */
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

function refuse(res: ServerResponse, r: Refusal): void {
  sendRpcError(res, r.status, r.code, r.message, r.headers);
}

export function createHttpHandler(gateway: Gateway, partial: Partial<HandlerOptions> = {}): McpHttpHandler {
  const options = { ...defaultHandlerOptions, ...partial };
  const table = new SessionTable(gateway, {
    sessionIdleMs: options.sessionIdleMs,
    ...(options.sessionSecret ? { sessionSecret: options.sessionSecret } : {}),
  });
  const modern = new ModernEndpoint(gateway, { idleMs: options.sessionIdleMs, maxContexts: MAX_CONTEXTS });
  const log = gateway.logger;

  async function post(req: IncomingMessage, res: ServerResponse, query: string): Promise<void> {
    const read = await readMessages(req, res, options.maxBodyBytes);
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
      const m = messages[0] as { id: string | number; method: string; params?: Record<string, unknown> };
      return modern.serve(req, res, query, m, era.envelope);
    }
    const init = messages.find((m) => (m as { method?: string }).method === "initialize") as
      | { params?: Record<string, unknown> }
      | undefined;
    if (init && messages.length > 1) {
      sendRpcError(res, 400, -32600, "Invalid Request: initialize must be sent alone");
      return;
    }
    if (options.stateless) return stateless(req, res, query, messages, batch, init !== undefined);
    let entry: Entry | Refusal;
    if (init) entry = await table.open(req, query, { seed: init.params ?? {} });
    else entry = await table.find(req);
    if (isRefusal(entry)) return refuse(res, entry);
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
      ...(params ? { params } : {}),
    });
    if (isRefusal(entry)) return refuse(res, entry);
    res.once("close", () => void gateway.closeSession(entry.session));
    entry.transport.handlePost(req, res, messages, batch);
  }

  async function mcp(req: IncomingMessage, res: ServerResponse, query: string): Promise<void> {
    if (req.method === "POST") return post(req, res, query);
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
    const entry = await table.find(req);
    if (isRefusal(entry)) return refuse(res, entry);
    if (req.method === "GET") return entry.transport.handleGet(res);
    await table.drop(entry.transport.sessionId);
    res.writeHead(200).end();
  }

  async function toolsets(req: IncomingMessage, res: ServerResponse, query: string): Promise<void> {
    const selected = gateway.select(query);
    if (!selected.ok) {
      sendJson(res, 400, { error: selected.error });
      return;
    }
    try {
      sendJson(res, 200, await gateway.reportFor(selected.selection, req.headers));
    } catch (err) {
      if (!(err instanceof TooManyInstances)) throw err;
      sendRpcError(res, 503, -32000, `Service Unavailable: ${err.message}`, { "retry-after": "30" });
    }
  }

  /** Host/Origin and bearer checks for everything but /healthz; true when the request may go on. */
  function admitted(req: IncomingMessage, res: ServerResponse): boolean {
    const problem = rebindingProblem(req, options.allowedHosts, options.allowedOrigins);
    if (problem) {
      sendRpcError(res, 403, -32000, `Forbidden: ${problem}`);
      req.resume();
      return false;
    }
    if (!authorized(req, gateway.catalog.tokens)) {
      sendRpcError(res, 401, -32000, "Unauthorized: send Authorization: Bearer <token>", {
        "www-authenticate": 'Bearer realm="toolpacks"',
      });
      req.resume();
      return false;
    }
    return true;
  }

  const handler = async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    // Mounted under a prefix in Express, req.url loses it; the original URL keeps it.
    const url = (req as { originalUrl?: string }).originalUrl ?? req.url ?? "/";
    const q = url.indexOf("?");
    const path = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? "" : url.slice(q + 1);
    const get = req.method === "GET";
    const ours =
      path === options.path ||
      (get && path === "/healthz" && options.healthz) ||
      (get && path === "/toolsets" && options.toolsetsRoute) ||
      (get && path === "/metrics" && options.metrics);
    if (!ours) return false;
    const rid = req.headers["x-request-id"];
    if (typeof rid !== "string" || !/^[\w.:-]{1,128}$/.test(rid)) req.headers["x-request-id"] = randomUUID();
    try {
      if (path === "/healthz")
        sendJson(res, 200, { ok: true, name: gateway.options.name, sessions: table.size });
      else if (!admitted(req, res)) return true;
      else if (path === options.path) await mcp(req, res, query);
      else if (path === "/toolsets") await toolsets(req, res, query);
      else {
        const text = await gateway.metrics.text();
        res.writeHead(200, { "content-type": gateway.metrics.registry.contentType });
        res.end(text);
      }
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
    },
  });
}
