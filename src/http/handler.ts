/**
 * @module The HTTP edge: routes (the MCP path, /toolsets, /healthz, /readyz, /metrics, the protected resource
 * metadata, the OAuth pages), Host/Origin, bodies read and bounded, and the era's codec: a POST's body decides
 * whether it is a 2025 session's or a 2026-07-28 request (SPEC §12.1). Who calls and what they may hold is
 * decided at the door (the Front); this module turns its answers and refusals into HTTP.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { modernClient } from "../codec/modern.js";
import type { ConsoleRoutes } from "../console/routes.js";
import type { Arrival, Connect } from "../door/arrival.js";
import type { Front } from "../door/front.js";
import { classifyPost } from "../modern/classify.js";
import { checkParamHeaders, checkStandardHeaders, scanParamHeaders } from "../modern/headers.js";
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "../protocol.js";
import { errors, WireError } from "../wire/errors.js";
import { Exchange } from "./exchange.js";
import { hostProblem, rebindingProblem } from "./guard.js";
import { readMessages } from "./messages.js";
import { type OAuthPages, serveOAuth } from "./oauth-pages.js";
import { outputOf } from "./output.js";
import { sendError, sendJson } from "./replies.js";
import { HttpSessionTransport } from "./session-transport.js";

export interface HandlerOptions {
  /** Where MCP is served (default /mcp). */
  readonly path: string;
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
  /** No sessions: every request is served by a session made for it and closed after it. */
  readonly stateless: boolean;
  /** The OAuth pages for upstreams with `oauth:` (start, callback, client metadata) under /oauth/. */
  readonly oauthPages?: OAuthPages;
  /** The browser console (src/console) under its own path: its files behind the Host/Origin check, its data behind /toolsets' checks. */
  readonly console?: ConsoleRoutes;
}

export const defaultHandlerOptions: HandlerOptions = Object.freeze({
  path: "/mcp",
  maxBodyBytes: 4 * 1024 * 1024,
  healthz: true,
  toolsetsRoute: true,
  metrics: true,
  stateless: false,
});

export interface McpHttpHandler {
  /** Handles a request; resolves false when the path is not ours (so a host app can route it elsewhere). */
  (req: IncomingMessage, res: ServerResponse): Promise<boolean>;
  readonly sessionCount: () => number;
  close(): Promise<void>;
}

/** The `x-mcp-header` parameters of a tool definition, scanned once per definition (they are frozen). */
const scanned = new WeakMap<object, ReturnType<typeof scanParamHeaders>>();
function paramHeadersOf(definition: { readonly inputSchema?: unknown }): ReturnType<typeof scanParamHeaders> {
  let scan = scanned.get(definition);
  if (!scan) {
    scan = scanParamHeaders(definition.inputSchema);
    scanned.set(definition, scan);
  }
  return scan;
}

const isRequest = (m: JSONRPCMessage) => "method" in m && "id" in m;

export function createHttpHandler(front: Front, partial: Partial<HandlerOptions> = {}): McpHttpHandler {
  const options = { ...defaultHandlerOptions, ...partial };
  const log = front.logger;

  /** A 2025 session's transport: its answers as JSON, or SSE when something must be streamed first. */
  const connect =
    (announce: boolean): Connect<HttpSessionTransport> =>
    ({ id, digest, admit }) =>
      new HttpSessionTransport(id, announce, outputOf(front, announce ? digest : undefined), admit);

  async function post(req: IncomingMessage, res: ServerResponse, arrival: Arrival): Promise<void> {
    const read = await readMessages(req, res, options.maxBodyBytes, front.limits().batch);
    if (!read) return;
    const { messages, batch } = read;
    // The body decides the era (SPEC §12.1): a request with the 2026-07-28 envelope has no session.
    const era = classifyPost(req.headers, batch ? messages : messages[0]);
    if (era.era === "refused") {
      const id = batch ? null : ((messages[0] as { id?: string | number }).id ?? null);
      return sendError(res, era.refusal, id);
    }
    if (era.era === "2026-07-28") {
      if (era.kind === "notification") return void res.writeHead(202).end();
      const m = messages[0] as { id: string | number; method: string; params?: Record<string, unknown> };
      return await modern(req, res, arrival, m, era.envelope);
    }
    const init = messages.find((m) => (m as { method?: string }).method === "initialize") as
      | { params?: Record<string, unknown> }
      | undefined;
    if (init && messages.length > 1) return sendError(res, errors.initializeNotAlone());
    if (options.stateless) return await stateless(req, res, arrival, messages, batch, init !== undefined);
    const entry = init
      ? await front.open(arrival, { seed: init.params ?? {} }, connect(true))
      : await front.find(arrival, connect(true));
    if (entry instanceof WireError) return sendError(res, entry);
    entry.transport.handlePost(req, res, messages, batch);
  }

  /** One 2026-07-28 request: its headers checked, served by the session the door gives it, answered on its exchange. */
  async function modern(
    req: IncomingMessage,
    res: ServerResponse,
    arrival: Arrival,
    m: { id: string | number; method: string; params?: Record<string, unknown> },
    envelope: Parameters<typeof modernClient>[0],
  ): Promise<void> {
    const bad = checkStandardHeaders(req.headers, m);
    if (bad) return sendError(res, bad, m.id);
    const served = await front.modern(arrival, m, envelope);
    if (served instanceof WireError) return sendError(res, served, m.id);
    try {
      if (m.method === "tools/call") {
        const definition = served.session.toolDefinition(String(m.params?.name));
        const scan = definition ? paramHeadersOf(definition) : undefined;
        const mismatch = scan?.ok
          ? checkParamHeaders(req.headers, scan.params, m.params?.arguments)
          : undefined;
        if (mismatch) return sendError(res, mismatch, m.id);
      }
      const exchange = new Exchange(res, m.id, outputOf(front, served.session.digest));
      const rid = req.headers["x-request-id"];
      await served.session.run(
        m,
        modernClient(envelope, served.client, served.unknown),
        exchange,
        typeof rid === "string" ? rid : undefined,
        exchange.cancellation,
        req.headers,
      );
    } finally {
      served.done();
    }
  }

  /** Stateless: a session made for this one request (its initialize replayed unless it is one), closed after. */
  async function stateless(
    req: IncomingMessage,
    res: ServerResponse,
    arrival: Arrival,
    messages: JSONRPCMessage[],
    batch: boolean,
    isInit: boolean,
  ): Promise<void> {
    if (!messages.some(isRequest)) return void res.writeHead(202).end();
    const version = req.headers["mcp-protocol-version"];
    if (typeof version === "string" && !SUPPORTED_PROTOCOL_VERSIONS.includes(version))
      return sendError(res, errors.unsupportedVersionHeader(version));
    const replay = isInit
      ? undefined
      : {
          protocolVersion: typeof version === "string" ? version : LATEST_PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: "stateless-client", version: "0" },
        };
    const entry = await front.open(
      arrival,
      { stateless: true, ...(replay ? { replay } : {}) },
      connect(false),
    );
    if (entry instanceof WireError) return sendError(res, entry);
    res.once("close", () => front.done(entry.session));
    entry.transport.handlePost(req, res, messages, batch);
  }

  function mcp(req: IncomingMessage, res: ServerResponse, arrival: Arrival): Promise<void> {
    return req.method === "POST" ? post(req, res, arrival) : notPost(req, res, arrival);
  }

  /** GET (a session's stream) and DELETE (its end); anything else is refused. */
  async function notPost(req: IncomingMessage, res: ServerResponse, arrival: Arrival): Promise<void> {
    if (options.stateless || (req.method !== "GET" && req.method !== "DELETE")) {
      sendError(res, errors.methodNotAllowed(options.stateless ? "POST" : "GET, POST, DELETE"));
      req.resume();
      return;
    }
    if (req.method === "GET" && !(req.headers.accept ?? "").includes("text/event-stream"))
      return sendError(res, errors.notAcceptable());
    const entry = await front.find(arrival, connect(true));
    if (entry instanceof WireError) return sendError(res, entry);
    if (req.method === "GET") return entry.transport.handleGet(res);
    await front.end(entry.session);
    res.writeHead(200).end();
  }

  async function toolsets(res: ServerResponse, arrival: Arrival): Promise<void> {
    const report = await front.report(arrival);
    if (report instanceof WireError) return sendError(res, report);
    if ("badSelection" in report) return sendJson(res, 400, { error: report.badSelection });
    sendJson(res, 200, report);
  }

  /** The MCP path, /toolsets and /metrics: Host/Origin first, then the door authenticates each request. */
  async function guarded(req: IncomingMessage, res: ServerResponse, path: string, query: string) {
    const problem = rebindingProblem(req, options.allowedHosts, options.allowedOrigins);
    if (problem) {
      sendError(res, errors.forbidden(problem));
      req.resume();
      return;
    }
    const arrival: Arrival = { query, headers: req.headers, address: req.socket?.remoteAddress ?? "unknown" };
    if (path === options.path) return await mcp(req, res, arrival);
    if (path === "/toolsets") return await toolsets(res, arrival);
    const metrics = await front.metrics(arrival);
    if (metrics instanceof WireError) {
      req.resume();
      return sendError(res, metrics);
    }
    res.writeHead(200, { "content-type": metrics.contentType });
    res.end(metrics.text);
  }

  const handler = async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    // Mounted under a prefix in Express, req.url loses it; the original URL keeps it.
    const url = (req as { originalUrl?: string }).originalUrl ?? req.url ?? "/";
    const q = url.indexOf("?");
    const path = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? "" : url.slice(q + 1);
    const get = req.method === "GET";
    const metadata = (get || req.method === "OPTIONS") && front.isMetadataPath(path);
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
      if (path === "/healthz") sendJson(res, 200, front.health());
      else if (path === "/readyz") {
        const ready = front.ready();
        sendJson(res, ready.ready ? 200 : 503, ready, { "cache-control": "no-store" });
      } else if (metadata) serveMetadata(req, res);
      else if (options.oauthPages && path.startsWith("/oauth/")) {
        // Open without a token (a browser has none); a valid one, when sent, says whom the start page acts for.
        const problem = rebindingProblem(req, options.allowedHosts, options.allowedOrigins);
        await serveOAuth(req, res, url, options.oauthPages, (a) => front.identify(a), problem);
      } else if (options.console?.owns(path)) {
        // Its files behind the Host/Origin check; its data authenticated at the door, as /toolsets is.
        const arrival: Arrival = {
          query,
          headers: req.headers,
          address: req.socket?.remoteAddress ?? "unknown",
        };
        await options.console.serve(req, res, path, query, {
          rebinding: () => rebindingProblem(req, options.allowedHosts, options.allowedOrigins),
          admit: async (q) => {
            const problem = rebindingProblem(req, options.allowedHosts, options.allowedOrigins);
            if (problem) {
              sendError(res, errors.forbidden(problem));
              req.resume();
              return undefined;
            }
            const principal = await front.authenticate(arrival, q);
            if (!(principal instanceof WireError)) return { principal };
            sendError(res, principal);
            req.resume();
            return undefined;
          },
        });
      } else await guarded(req, res, path, query);
    } catch (err) {
      log.error("request failed", {
        error: (err as Error).message,
        path,
        request_id: req.headers["x-request-id"],
      });
      if (!res.headersSent) sendError(res, errors.serverError());
      else res.end();
    }
    return true;
  };

  /** GET (or a CORS preflight) of the protected resource metadata: public, `Access-Control-Allow-Origin: *`. */
  function serveMetadata(req: IncomingMessage, res: ServerResponse): void {
    const problem = hostProblem(req, options.allowedHosts);
    if (problem) {
      sendError(res, errors.forbidden(problem));
      return;
    }
    const cors = { "access-control-allow-origin": "*" };
    if (req.method === "OPTIONS") {
      res.writeHead(204, {
        ...cors,
        "access-control-allow-methods": "GET, OPTIONS",
        "access-control-allow-headers": "mcp-protocol-version",
      });
      res.end();
      return;
    }
    sendJson(res, 200, front.metadata(), { ...cors, "cache-control": "max-age=300" });
  }

  return Object.assign(handler, {
    sessionCount: () => front.sessionCount,
    close: () => front.close(),
  });
}
