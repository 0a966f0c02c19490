#!/usr/bin/env node
// Serves the conformance fixture (test/fixtures/conformance-server-lib.mjs) over Streamable HTTP, so the
// conformance CLI can be run against the fixture directly:
//   node test/conformance/serve-fixture-http.mjs [PORT]      (PORT 0 or absent: any free port)
// prints "listening on http://127.0.0.1:PORT/mcp" to stderr.
// One Server + StreamableHTTPServerTransport per session, SSE responses, an in-memory event store
// (resumability, SEP-1699), and Host/Origin checks against DNS rebinding (the SDK's own check is Express-only).
import { randomUUID } from "node:crypto";
import http from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { createConformanceServer } from "../fixtures/conformance-server-lib.mjs";

const port = Number(process.argv[2] ?? 0);
const MAX_BODY = 4 * 1024 * 1024;
const LOCAL_HOSTNAMES = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** Minimal event store: ids are "<streamId>|<seq>", events kept per stream. */
class MemoryEventStore {
  constructor() {
    this.seq = 0;
    this.streams = new Map();
  }
  async storeEvent(streamId, message) {
    const eventId = `${streamId}|${++this.seq}`;
    let events = this.streams.get(streamId);
    if (!events) {
      events = [];
      this.streams.set(streamId, events);
    }
    events.push({ eventId, message });
    return eventId;
  }
  async getStreamIdForEventId(eventId) {
    const streamId = eventId.slice(0, eventId.lastIndexOf("|"));
    return this.streams.has(streamId) ? streamId : undefined;
  }
  async replayEventsAfter(lastEventId, { send }) {
    const streamId = await this.getStreamIdForEventId(lastEventId);
    if (!streamId) return "";
    const events = this.streams.get(streamId);
    const index = events.findIndex((e) => e.eventId === lastEventId);
    for (const { eventId, message } of events.slice(index + 1)) {
      // The priming event is stored as {} and must not be replayed as a message.
      if (message && Object.keys(message).length > 0) await send(eventId, message);
    }
    return streamId;
  }
}

/** Host must be a loopback name (any port); Origin, when present, must be http(s) on a loopback name. */
function hostAllowed(req) {
  const host = req.headers.host;
  if (!host) return false;
  let hostname;
  try {
    hostname = new URL(`http://${host}`).hostname;
  } catch {
    return false;
  }
  if (!LOCAL_HOSTNAMES.has(hostname)) return false;
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  try {
    const url = new URL(origin);
    return (url.protocol === "http:" || url.protocol === "https:") && LOCAL_HOSTNAMES.has(url.hostname);
  } catch {
    return false;
  }
}

function sendJsonError(res, status, code, message) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on("data", (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        reject(new Error("body too large"));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** sessionId -> transport */
const sessions = new Map();

async function handle(req, res) {
  const url = new URL(req.url ?? "/", "http://localhost");
  if (url.pathname !== "/mcp") {
    sendJsonError(res, 404, -32000, "Not found");
    return;
  }
  if (!hostAllowed(req)) {
    sendJsonError(res, 403, -32000, "Forbidden: Host/Origin not allowed");
    return;
  }
  const sessionId = req.headers["mcp-session-id"];
  if (req.method === "POST") {
    let body;
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      sendJsonError(res, 400, -32700, "Parse error");
      return;
    }
    if (typeof sessionId === "string") {
      const transport = sessions.get(sessionId);
      if (!transport) {
        sendJsonError(res, 404, -32001, "Session not found");
        return;
      }
      await transport.handleRequest(req, res, body);
      return;
    }
    if (!isInitializeRequest(body)) {
      sendJsonError(res, 400, -32000, "Bad Request: no session id and not an initialize request");
      return;
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: new MemoryEventStore(),
      retryInterval: 500,
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    const server = createConformanceServer();
    server.onerror = (error) => process.stderr.write(`fixture server error: ${error?.message ?? error}\n`);
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
    return;
  }
  if (req.method === "GET" || req.method === "DELETE") {
    const transport = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
    if (!transport) {
      if (typeof sessionId === "string") sendJsonError(res, 404, -32001, "Session not found");
      else sendJsonError(res, 400, -32000, "Bad Request: missing mcp-session-id");
      return;
    }
    await transport.handleRequest(req, res);
    return;
  }
  res.writeHead(405, { allow: "GET, POST, DELETE" }).end();
}

const httpServer = http.createServer((req, res) => {
  handle(req, res).catch((error) => {
    process.stderr.write(`request failed: ${error?.stack ?? error}\n`);
    if (!res.headersSent) sendJsonError(res, 500, -32603, "Internal error");
    else res.end();
  });
});

httpServer.listen(port, "127.0.0.1", () => {
  const address = httpServer.address();
  process.stderr.write(`listening on http://127.0.0.1:${address.port}/mcp\n`);
});

const shutdown = () => {
  for (const transport of sessions.values()) transport.close().catch(() => {});
  httpServer.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 1000).unref();
};
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
