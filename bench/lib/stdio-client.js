/** @module Stdio clients: a lean newline-delimited JSON-RPC client, and the SDK client for the direct floor. */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { PROTOCOL } from "./http-client.js";
import { track } from "./proc.js";

/** One MCP session over a child's stdin/stdout; many requests may be in flight. */
export class StdioSession {
  constructor(child) {
    this.child = child;
    this.nextId = 1;
    this.pending = new Map();
    let buf = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (s) => {
      buf += s;
      let nl = buf.indexOf("\n");
      while (nl >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.trim()) this.onLine(line);
        nl = buf.indexOf("\n");
      }
    });
    child.once("exit", (code) => {
      for (const p of this.pending.values())
        p.reject(new Error(`stdio target exited (${code}): ${child.tail}`));
      this.pending.clear();
    });
  }

  onLine(line) {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      return; // not ours to judge here: a stray log line on stdout
    }
    if (msg.id === undefined || msg.method) {
      // A request from the server (ping, roots/list…): refuse politely so it does not wait.
      if (msg.method && msg.id !== undefined) this.write({ jsonrpc: "2.0", id: msg.id, result: {} });
      return;
    }
    const p = this.pending.get(msg.id);
    if (!p) return;
    this.pending.delete(msg.id);
    p.resolve({ msg, bytes: line.length });
  }

  write(msg) {
    this.child.stdin.write(`${JSON.stringify(msg)}\n`);
  }

  request(method, params) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.write({ jsonrpc: "2.0", id, method, params });
    });
  }

  async send(method, params) {
    const { msg } = await this.request(method, params);
    if (msg.error) throw new Error(`${method}: ${msg.error.message}`);
    return { result: msg.result, bytes: Buffer.byteLength(JSON.stringify(msg.result)) };
  }

  async initialize() {
    const { result } = await this.send("initialize", {
      protocolVersion: PROTOCOL,
      capabilities: {},
      clientInfo: { name: "toolpacks-bench", version: "1.0.0" },
    });
    this.write({ jsonrpc: "2.0", method: "notifications/initialized" });
    this.initResult = result;
    return this;
  }

  async call(name, args) {
    const { msg } = await this.request("tools/call", { name, arguments: args });
    if (msg.error || msg.result?.isError)
      throw new Error(`tools/call failed: ${JSON.stringify(msg).slice(0, 200)}`);
  }

  listTools() {
    return this.send("tools/list", {});
  }

  close() {}
}

/** The SDK client straight to a stdio upstream: the floor, as the issue defines it. */
export class SdkSession {
  async connect(command, args) {
    this.transport = new StdioClientTransport({ command, args, stderr: "ignore", env: process.env });
    this.client = new Client({ name: "toolpacks-bench", version: "1.0.0" }, { capabilities: {} });
    await this.client.connect(this.transport);
    this.pid = this.transport.pid;
    track(this.pid);
    return this;
  }

  async call(name, args) {
    const r = await this.client.callTool({ name, arguments: args });
    if (r.isError) throw new Error(`tools/call failed: ${JSON.stringify(r).slice(0, 200)}`);
  }

  async listTools() {
    const result = await this.client.listTools();
    return { result, bytes: Buffer.byteLength(JSON.stringify(result)) };
  }

  async close() {
    const pid = this.pid;
    await Promise.race([this.client.close(), new Promise((r) => setTimeout(r, 1000))]);
    try {
      if (pid) process.kill(pid, "SIGKILL");
    } catch {
      // exited with its stdin
    }
  }
}
