/**
 * @module The floor of a proxy of toolpacks' shape: node:http in front of one stdio upstream, nothing else. Each
 * POSTed JSON-RPC request is written to the upstream's stdin as one line under an id of its own (sessions'
 * ids collide), and the answer with that id is written back; notifications are written and answered 202. No
 * sessions, limits, selection or checks: what is left is the two hops every such proxy makes (the HTTP socket
 * and the upstream's pipe), so toolpacks' CPU per call over this one's is what its features cost.
 *
 * `node bare-relay.js COMMAND ARGS...`
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import http from "node:http";

const [command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const waiting = new Map();
let next = 1;
let buffered = "";
child.stdout.setEncoding("utf8");
child.stdout.on("data", (chunk) => {
  buffered += chunk;
  let nl = buffered.indexOf("\n");
  while (nl >= 0) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    nl = buffered.indexOf("\n");
    if (!line.trim()) continue;
    const msg = JSON.parse(line);
    const w = waiting.get(msg.id);
    if (!w) continue;
    waiting.delete(msg.id);
    msg.id = w.id;
    const out = JSON.stringify(msg);
    const headers = { "content-type": "application/json", "content-length": Buffer.byteLength(out) };
    if (w.initialize) headers["mcp-session-id"] = randomUUID();
    w.res.writeHead(200, headers).end(out);
  }
});

const server = http.createServer((req, res) => {
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
    const msg = JSON.parse(body);
    if (msg.id === undefined) {
      child.stdin.write(`${body}\n`);
      res.writeHead(202).end();
      return;
    }
    const id = next++;
    waiting.set(id, { id: msg.id, res, initialize: msg.method === "initialize" });
    msg.id = id;
    child.stdin.write(`${JSON.stringify(msg)}\n`);
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, "127.0.0.1", () => {
  process.stderr.write(`listening on http://127.0.0.1:${server.address().port}/mcp\n`);
});
process.on("SIGTERM", () => {
  child.kill();
  process.exit(0);
});
