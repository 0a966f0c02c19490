/** @module The HTTP routes: the MCP path (Streamable HTTP with sessions), /toolsets and /healthz. */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { type JSONRPCMessage, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
import type { Gateway } from "../proxy/gateway.js";
import type { Session } from "../proxy/session.js";
import type { Resolution } from "../resolve.js";
import { TooManyInstances } from "../upstream/pool.js";
import { authorized } from "./auth.js";
import { readBody } from "./body.js";
import { rebindingProblem } from "./guard.js";
import { sendJson, sendRpcError } from "./replies.js";
import { HttpSessionTransport } from "./session-transport.js";

export interface HandlerOptions {
  /** Where MCP is served (default /mcp). */
  readonly path: string;
  /** Idle sessions are closed after this long (default 30 min). */
  readonly sessionIdleMs: number;
  /** Larger request bodies get 413 (default 4 MiB). */
  readonly maxBodyBytes: number;
  /** Serve GET /healthz and GET /toolsets (default true). */
  readonly healthz: boolean;
  readonly toolsetsRoute: boolean;
  /** Serve GET /metrics in Prometheus format (default true; behind auth when auth is on). */
  readonly metrics: boolean;
  /** Host names (no port) a request's Host may carry; undefined accepts any. See guard.ts. */
  readonly allowedHosts?: readonly string[];
  /** Origins a browser request may come from, besides those naming an allowed host. */
  readonly allowedOrigins?: readonly string[];
}

export const defaultHandlerOptions: HandlerOptions = Object.freeze({
  path: "/mcp",
  sessionIdleMs: 30 * 60_000,
  maxBodyBytes: 4 * 1024 * 1024,
  healthz: true,
  toolsetsRoute: true,
  metrics: true,
});

interface Entry {
  readonly session: Session;
  readonly transport: HttpSessionTransport;
}

export interface McpHttpHandler {
  /** Handles a request; returns false when the path is not ours (so a host app can route it elsewhere). */
  (req: IncomingMessage, res: ServerResponse): Promise<boolean>;
  readonly sessionCount: () => number;
  close(): Promise<void>;
}

export function createHttpHandler(gateway: Gateway, partial: Partial<HandlerOptions> = {}): McpHttpHandler {
  const options = { ...defaultHandlerOptions, ...partial };
  const table = new Map<string, Entry>();
  const log = gateway.options.logger;

  const sweep = setInterval(
    () => {
      const cutoff = Date.now() - options.sessionIdleMs;
      for (const [id, e] of table) {
        if (e.session.lastSeen < cutoff && !e.transport.streaming) {
          log.info("session expired", { session: id });
          void drop(id);
        }
      }
    },
    Math.min(options.sessionIdleMs, 60_000),
  );
  sweep.unref();

  async function drop(id: string): Promise<void> {
    const e = table.get(id);
    if (!e) return;
    table.delete(id);
    await gateway.closeSession(e.session);
  }

  function lookup(req: IncomingMessage, res: ServerResponse): Entry | undefined {
    const id = req.headers["mcp-session-id"];
    if (typeof id !== "string" || !id) {
      sendRpcError(res, 400, -32000, "Bad Request: Mcp-Session-Id header is required");
      return undefined;
    }
    const entry = table.get(id);
    if (!entry) {
      sendRpcError(res, 404, -32001, "Session not found");
      return undefined;
    }
    const version = req.headers["mcp-protocol-version"];
    if (typeof version === "string" && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      sendRpcError(res, 400, -32000, `Bad Request: unsupported protocol version ${version}`);
      return undefined;
    }
    entry.session.lastSeen = Date.now();
    return entry;
  }

  async function post(req: IncomingMessage, res: ServerResponse, query: string): Promise<void> {
    const type = req.headers["content-type"] ?? "";
    if (!type.includes("application/json")) {
      sendRpcError(res, 415, -32000, "Unsupported Media Type: Content-Type must be application/json");
      req.resume();
      return;
    }
    const body = await readBody(req, options.maxBodyBytes);
    if (!body.ok) {
      sendRpcError(res, 413, -32000, `Payload Too Large: the limit is ${options.maxBodyBytes} bytes`, {
        connection: "close",
      });
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.text);
    } catch (err) {
      sendRpcError(res, 400, -32700, `Parse error: ${(err as Error).message}`);
      return;
    }
    const batch = Array.isArray(parsed);
    const messages = (batch ? parsed : [parsed]) as JSONRPCMessage[];
    if (
      messages.length === 0 ||
      !messages.every((m) => m && typeof m === "object" && (m as { jsonrpc?: unknown }).jsonrpc === "2.0")
    ) {
      sendRpcError(res, 400, -32600, "Invalid Request: expected JSON-RPC 2.0 message(s)");
      return;
    }
    const init = messages.find((m) => (m as { method?: string }).method === "initialize");
    if (!init) {
      const entry = lookup(req, res);
      if (entry) entry.transport.handlePost(req, res, messages, batch);
      return;
    }
    if (messages.length > 1) {
      sendRpcError(res, 400, -32600, "Invalid Request: initialize must be sent alone");
      return;
    }
    await initialize(req, res, query, messages, batch);
  }

  async function initialize(
    req: IncomingMessage,
    res: ServerResponse,
    query: string,
    messages: JSONRPCMessage[],
    batch: boolean,
  ) {
    const selected = gateway.select(query);
    if (!selected.ok) {
      sendRpcError(res, 400, -32602, `Bad selection: ${selected.error}`);
      return;
    }
    const { selection } = selected;
    const id = randomUUID();
    let session: Session;
    let resolution: Resolution;
    try {
      const instances = gateway.instancesFor(selection, req.headers, id);
      resolution = await gateway.resolve(selection, instances);
      session = gateway.openSession(selection, resolution, instances);
    } catch (err) {
      if (!(err instanceof TooManyInstances)) throw err;
      sendRpcError(res, 503, -32000, `Service Unavailable: ${err.message}`, { "retry-after": "30" });
      return;
    }
    const transport = new HttpSessionTransport(id);
    transport.onclose = () => {
      if (table.get(id)?.transport === transport) table.delete(id);
    };
    await session.server.connect(transport);
    table.set(id, { session, transport });
    log.info("session opened", {
      session: id,
      active: resolution.active,
      tools: resolution.tools.length,
      ...(selection.unknown.length ? { unknown: selection.unknown } : {}),
      ...(resolution.unavailable.length
        ? { not_enabled: resolution.unavailable.map((u) => `${u.name}: ${u.reason}`) }
        : {}),
    });
    transport.handlePost(req, res, messages, batch);
  }

  async function mcp(req: IncomingMessage, res: ServerResponse, query: string): Promise<void> {
    switch (req.method) {
      case "POST":
        return post(req, res, query);
      case "GET": {
        const accept = req.headers.accept ?? "";
        if (!accept.includes("text/event-stream")) {
          sendRpcError(res, 406, -32000, "Not Acceptable: GET needs Accept: text/event-stream");
          return;
        }
        lookup(req, res)?.transport.handleGet(res);
        return;
      }
      case "DELETE": {
        const entry = lookup(req, res);
        if (!entry) return;
        await drop(entry.transport.sessionId);
        res.writeHead(200).end();
        return;
      }
      default:
        sendRpcError(res, 405, -32000, "Method Not Allowed", { allow: "GET, POST, DELETE" });
        req.resume();
    }
  }

  async function toolsets(req: IncomingMessage, res: ServerResponse, query: string): Promise<void> {
    const selected = gateway.select(query);
    if (!selected.ok) {
      sendJson(res, 400, { error: selected.error });
      return;
    }
    sendJson(res, 200, await gateway.reportFor(selected.selection, req.headers));
  }

  const handler = async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? "" : url.slice(q + 1);
    try {
      if (
        typeof req.headers["x-request-id"] !== "string" ||
        !/^[\w.:-]{1,128}$/.test(req.headers["x-request-id"])
      ) {
        req.headers["x-request-id"] = randomUUID();
      }
      if (path === options.path || path === "/toolsets" || path === "/metrics") {
        const problem = rebindingProblem(req, options.allowedHosts, options.allowedOrigins);
        if (problem) {
          sendRpcError(res, 403, -32000, `Forbidden: ${problem}`);
          req.resume();
          return true;
        }
        if (!authorized(req, gateway.catalog.tokens)) {
          sendRpcError(res, 401, -32000, "Unauthorized: send Authorization: Bearer <token>", {
            "www-authenticate": 'Bearer realm="toolpacks"',
          });
          req.resume();
          return true;
        }
      }
      if (path === options.path) await mcp(req, res, query);
      else if (path === "/healthz" && options.healthz && req.method === "GET")
        sendJson(res, 200, { ok: true, name: gateway.options.name, sessions: table.size });
      else if (path === "/toolsets" && options.toolsetsRoute && req.method === "GET")
        await toolsets(req, res, query);
      else if (path === "/metrics" && options.metrics && req.method === "GET") {
        const text = await gateway.metrics.text();
        res.writeHead(200, { "content-type": gateway.metrics.registry.contentType });
        res.end(text);
      } else return false;
    } catch (err) {
      log.error("request failed", { error: (err as Error).message, path });
      if (!res.headersSent) sendRpcError(res, 500, -32603, "Internal error");
      else res.end();
    }
    return true;
  };

  return Object.assign(handler, {
    sessionCount: () => table.size,
    close: async () => {
      clearInterval(sweep);
      await Promise.all([...table.keys()].map((id) => drop(id)));
    },
  });
}
