/**
 * @module The ceiling: a bare node:http server that parses each JSON-RPC POST and answers a fixed result. It does
 * what any proxy on this runtime must do at the least (one HTTP hop, one JSON parse), and nothing else.
 */
import { randomUUID } from "node:crypto";
import http from "node:http";

const INIT = {
  protocolVersion: "2025-11-25",
  capabilities: { tools: {} },
  serverInfo: { name: "bare", version: "1.0.0" },
};
const TOOLS = {
  tools: [{ name: "echo", inputSchema: { type: "object", properties: { text: { type: "string" } } } }],
};
const CALL = { content: [{ type: "text", text: "hello" }] };

const server = http.createServer((req, res) => {
  if (req.method === "GET") {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.flushHeaders();
    return;
  }
  if (req.method !== "POST") {
    res.writeHead(req.method === "DELETE" ? 200 : 405).end();
    return;
  }
  let body = "";
  req.setEncoding("utf8");
  req.on("data", (s) => {
    body += s;
  });
  req.on("end", () => {
    let msg;
    try {
      msg = JSON.parse(body);
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (msg.id === undefined) {
      res.writeHead(202).end();
      return;
    }
    const headers = { "content-type": "application/json" };
    let result = CALL;
    if (msg.method === "initialize") {
      result = INIT;
      headers["mcp-session-id"] = randomUUID();
    } else if (msg.method === "tools/list") result = TOOLS;
    const out = `{"jsonrpc":"2.0","id":${JSON.stringify(msg.id)},"result":${JSON.stringify(result)}}`;
    headers["content-length"] = Buffer.byteLength(out);
    res.writeHead(200, headers).end(out);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address();
  process.stderr.write(`listening on http://127.0.0.1:${port}/mcp\n`);
});
process.on("SIGTERM", () => process.exit(0));
