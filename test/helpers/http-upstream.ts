/**
 * A real MCP server over Streamable HTTP in the test process (the SDK's low-level Server and its HTTP transport, a
 * session per initialize, SSE answers and the standalone GET stream), with tools the test writes: what the proxy
 * in front of it does to its connections, errors and values is seen from the server's side.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  ElicitResultSchema,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";

type Result = { content: { type: "text"; text: string }[]; isError?: boolean };

/** What a tool gets: its arguments, the request's headers, its progress token, and a way to ask the client. */
interface ToolCall {
  readonly args: Record<string, unknown>;
  readonly headers: IncomingHttpHeaders;
  readonly signal: AbortSignal;
  progress(progress: number): Promise<void>;
  /** An elicitation on this call's answer stream (tied to it): the client's answer. */
  elicit(message: string): Promise<unknown>;
}

interface HttpTool {
  readonly inputSchema?: Record<string, unknown>;
  run(call: ToolCall): Promise<Result> | Result;
}

export interface HttpUpstream {
  readonly url: string;
  /** Sessions initialized so far. */
  initializes(): number;
  /** Connections the server has open now. */
  connections(): number;
  /** Forgets every session (as a restart does); later requests of them get `stale`'s answer. */
  forgetSessions(): void;
  close(): Promise<void>;
}

export interface HttpUpstreamOptions {
  readonly tools: Readonly<Record<string, HttpTool>>;
  /** How a request for a session the server does not know is answered (default: 404, as the SDK does). */
  readonly stale?: (id: unknown) => { status: number; body: unknown };
}

export const text = (t: string): Result => ({ content: [{ type: "text", text: t }] });

/** Sleeps `ms`, ending early (rejecting) when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((ok, fail) => {
    const timer = setTimeout(ok, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      fail(new Error("cancelled"));
    });
  });
}

export async function startHttpUpstream(options: HttpUpstreamOptions): Promise<HttpUpstream> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  let initializes = 0;
  const makeServer = (headersOf: () => IncomingHttpHeaders) => {
    const server = new Server(
      { name: "http-upstream", version: "1.0.0" },
      { capabilities: { tools: {}, logging: {} } },
    );
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: Object.entries(options.tools).map(([name, t]) => ({
        name,
        inputSchema: t.inputSchema ?? { type: "object", properties: {} },
      })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
      const tool = options.tools[req.params.name];
      if (!tool) throw new McpError(-32602, `Unknown tool: ${req.params.name}`);
      const token = req.params._meta?.progressToken;
      return tool.run({
        args: (req.params.arguments ?? {}) as Record<string, unknown>,
        headers: (extra.requestInfo?.headers as IncomingHttpHeaders | undefined) ?? headersOf(),
        signal: extra.signal,
        progress: async (progress) => {
          if (token !== undefined)
            await extra.sendNotification({
              method: "notifications/progress",
              params: { progressToken: token, progress },
            });
        },
        elicit: (message) =>
          extra.sendRequest(
            {
              method: "elicitation/create",
              params: { message, requestedSchema: { type: "object", properties: {} } },
            },
            ElicitResultSchema,
          ),
      }) as never;
    });
    return server;
  };
  const sockets = new Set<import("node:net").Socket>();
  const http = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
    const id = req.headers["mcp-session-id"];
    let transport = typeof id === "string" ? transports.get(id) : undefined;
    if (!transport) {
      if (id !== undefined || body?.method !== "initialize") {
        const stale = options.stale?.(body?.id ?? null) ?? {
          status: id !== undefined ? 404 : 400,
          body: { jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found" } },
        };
        res.writeHead(stale.status, { "content-type": "application/json" });
        res.end(JSON.stringify(stale.body));
        return;
      }
      initializes++;
      const t = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => {
          transports.set(sid, t);
        },
      });
      transport = t;
      await makeServer(() => req.headers).connect(t);
    }
    await transport.handleRequest(req, res, body);
  });
  http.on("connection", (s) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
  });
  await new Promise<void>((ok) => http.listen(0, "127.0.0.1", ok));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    initializes: () => initializes,
    connections: () => sockets.size,
    forgetSessions: () => transports.clear(),
    close: () =>
      new Promise<void>((ok) => {
        for (const t of transports.values()) void t.close().catch(() => {});
        http.closeAllConnections();
        http.close(() => ok());
      }),
  };
}
