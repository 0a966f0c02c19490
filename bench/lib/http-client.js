/** @module The lean load client: plain node:http with keep-alive and a minimal MCP Streamable HTTP exchange. */
import http from "node:http";
import { Pool } from "undici";

export const PROTOCOL = "2025-11-25";
const CLIENT_INFO = { name: "toolpacks-bench", version: "1.0.0" };

/**
 * Requests go through one undici Pool per origin (keep-alive; about half the client CPU per call of
 * http.request, which matters on 2 cores); GET streams take node:http sockets of their own so they never
 * hold a pool connection.
 */
const pools = new Map();
const streamAgent = new http.Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });

function pool(url) {
  let p = pools.get(url.origin);
  if (!p) {
    p = new Pool(url.origin, { connections: 256, pipelining: 1, keepAliveTimeout: 30_000 });
    pools.set(url.origin, p);
  }
  return p;
}

async function post(url, headers, body) {
  const res = await pool(url).request({ path: url.pathname + url.search, method: "POST", headers, body });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

/** The JSON-RPC answer with `id` from a JSON or SSE body. */
export function parseAnswer(res, id) {
  const type = res.headers["content-type"] ?? "";
  if (type.startsWith("text/event-stream")) {
    for (const line of res.text.split("\n")) {
      if (!line.startsWith("data:")) continue;
      const data = line.slice(5).trim();
      if (!data) continue;
      const msg = JSON.parse(data);
      if (msg.id === id) return msg;
    }
    throw new Error(`no answer for id ${id} in SSE body: ${res.text.slice(0, 200)}`);
  }
  const msg = JSON.parse(res.text);
  if (Array.isArray(msg)) return msg.find((m) => m.id === id);
  return msg;
}

/** One MCP session over Streamable HTTP. */
export class HttpSession {
  constructor(url) {
    this.url = new URL(url);
    this.nextId = 1;
    this.headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    this.stream = undefined;
  }

  async send(method, params) {
    const id = this.nextId++;
    const body = JSON.stringify({ jsonrpc: "2.0", id, method, params });
    const res = await post(this.url, { ...this.headers, "content-length": Buffer.byteLength(body) }, body);
    if (res.status !== 200) throw new Error(`${method}: HTTP ${res.status} ${res.text.slice(0, 200)}`);
    const msg = parseAnswer(res, id);
    if (msg?.error) throw new Error(`${method}: ${msg.error.message}`);
    return { result: msg.result, bytes: Buffer.byteLength(JSON.stringify(msg.result)) };
  }

  async notify(method, params) {
    const body = JSON.stringify({ jsonrpc: "2.0", method, ...(params ? { params } : {}) });
    const res = await post(this.url, { ...this.headers, "content-length": Buffer.byteLength(body) }, body);
    if (res.status >= 300) throw new Error(`${method}: HTTP ${res.status} ${res.text.slice(0, 200)}`);
  }

  async initialize() {
    const id = this.nextId++;
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "initialize",
      params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: CLIENT_INFO },
    });
    const res = await post(this.url, { ...this.headers, "content-length": Buffer.byteLength(body) }, body);
    if (res.status !== 200) throw new Error(`initialize: HTTP ${res.status} ${res.text.slice(0, 300)}`);
    const msg = parseAnswer(res, id);
    if (msg?.error) throw new Error(`initialize: ${msg.error.message}`);
    const sid = res.headers["mcp-session-id"];
    if (sid) this.headers["mcp-session-id"] = sid;
    this.headers["mcp-protocol-version"] = msg.result.protocolVersion ?? PROTOCOL;
    await this.notify("notifications/initialized");
    this.initResult = msg.result;
    return this;
  }

  /** A tools/call of `name`; the body is prebuilt per call but for its id. */
  async call(name, args) {
    const id = this.nextId++;
    const body = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${JSON.stringify({ name, arguments: args })}}`;
    const res = await post(this.url, { ...this.headers, "content-length": Buffer.byteLength(body) }, body);
    if (res.status !== 200) throw new Error(`tools/call: HTTP ${res.status} ${res.text.slice(0, 200)}`);
    const msg = parseAnswer(res, id);
    if (!msg || msg.error || msg.result?.isError)
      throw new Error(`tools/call failed: ${res.text.slice(0, 200)}`);
  }

  listTools() {
    return this.send("tools/list", {});
  }

  /** Opens the standalone GET SSE stream and resolves once the server answered 200. */
  openStream() {
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          agent: streamAgent,
          host: this.url.hostname,
          port: this.url.port,
          path: this.url.pathname + this.url.search,
          method: "GET",
          headers: { ...this.headers, accept: "text/event-stream" },
        },
        (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            reject(new Error(`GET stream: HTTP ${res.statusCode}`));
            return;
          }
          res.on("error", () => {});
          res.resume();
          this.stream = req;
          resolve();
        },
      );
      req.on("error", reject);
      req.end();
    });
  }

  close() {
    this.stream?.destroy();
    this.stream = undefined;
  }
}

/** A 2026-07-28 client: no initialize, no session; every request carries its envelope and its headers. */
export class ModernHttpSession {
  constructor(url) {
    this.url = new URL(url);
    this.nextId = 1;
    this.meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {},
      "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    };
    this.headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
    };
  }

  async initialize() {
    return this;
  }

  async send(method, params = {}) {
    const id = this.nextId++;
    const name = params.name ?? params.uri;
    const body = JSON.stringify({ jsonrpc: "2.0", id, method, params: { ...params, _meta: this.meta } });
    const headers = {
      ...this.headers,
      "mcp-method": method,
      ...(name ? { "mcp-name": name } : {}),
      "content-length": Buffer.byteLength(body),
    };
    const res = await post(this.url, headers, body);
    if (res.status !== 200) throw new Error(`${method}: HTTP ${res.status} ${res.text.slice(0, 200)}`);
    const msg = parseAnswer(res, id);
    if (msg?.error) throw new Error(`${method}: ${msg.error.message}`);
    return { result: msg.result, bytes: Buffer.byteLength(JSON.stringify(msg.result)) };
  }

  async call(name, args) {
    const { result } = await this.send("tools/call", { name, arguments: args });
    if (result?.isError) throw new Error(`tools/call failed: ${JSON.stringify(result).slice(0, 200)}`);
  }

  listTools() {
    return this.send("tools/list", {});
  }

  async openStream() {}

  close() {}
}

/** Drops the pool of a target that stops, so a later target on the same port never gets its dead sockets. */
export async function closePool(url) {
  const origin = new URL(url).origin;
  const p = pools.get(origin);
  pools.delete(origin);
  await p?.destroy();
}

export async function closeAgents() {
  streamAgent.destroy();
  await Promise.all([...pools.values()].map((p) => p.destroy()));
  pools.clear();
}
