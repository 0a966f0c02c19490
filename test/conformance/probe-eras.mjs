#!/usr/bin/env node
// Experiment: how an SDK v2 client (@modelcontextprotocol/client 2.4) in its three negotiation modes talks to
//   (a) `toolpacks serve` (build first: npm run build), over HTTP and stdio, in front of fixture-server.mjs;
//   (b) test/fixtures/modern-server.mjs over HTTP and stdio.
// Prints, per target and mode, the HTTP wire (method, the MCP headers, status, body head) and the outcome
// (era, negotiated version, a tool call). Usage: node test/conformance/probe-eras.mjs [--only a|b]
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const only = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1] : undefined;
const MODES = [
  ["default", undefined],
  ["auto", { mode: "auto", probe: { timeoutMs: 15000 } }],
  ["pin", { mode: { pin: "2026-07-28" }, probe: { timeoutMs: 15000 } }],
];
const SHOWN = ["mcp-protocol-version", "mcp-method", "mcp-name", "mcp-session-id"];
const say = (s) => process.stdout.write(`${s}\n`);

function tracingFetch(log) {
  return async (input, init = {}) => {
    const h = new Headers(init.headers);
    let method = "";
    try {
      method = JSON.parse(String(init.body ?? "{}")).method ?? "(response)";
    } catch {}
    const shown = SHOWN.filter((k) => h.has(k)).map((k) => `${k}: ${h.get(k)}`);
    log.push(`  → ${init.method ?? "GET"} ${method} ${shown.join(" | ")}`);
    const res = await fetch(input, init);
    const type = res.headers.get("content-type") ?? "";
    let head = "";
    if (!type.includes("event-stream")) head = (await res.clone().text()).slice(0, 220).replace(/\s+/g, " ");
    log.push(`  ← ${res.status} ${type.split(";")[0]} ${head}`);
    return res;
  };
}

async function attempt(label, makeTransport, negotiation, call) {
  const log = [];
  const client = new Client(
    { name: "probe-eras", version: "1.0.0" },
    { capabilities: { elicitation: {} }, ...(negotiation ? { versionNegotiation: negotiation } : {}) },
  );
  client.setRequestHandler("elicitation/create", async () => ({ action: "accept", content: { ok: true } }));
  const started = Date.now();
  try {
    await client.connect(makeTransport(log));
    const era = client.getProtocolEra();
    const tools = await client.listTools();
    const result = await client.callTool(call);
    const text = result.content?.[0]?.text ?? JSON.stringify(result).slice(0, 120);
    say(
      `${label}: era=${era} version=${client.getNegotiatedProtocolVersion?.()} tools=${tools.tools.length} call → ${text.slice(0, 140)} (${Date.now() - started} ms)`,
    );
  } catch (err) {
    say(`${label}: FAILED ${err?.code ?? ""} ${err?.message ?? err} (${Date.now() - started} ms)`);
  } finally {
    await client.close().catch(() => {});
  }
  for (const line of log) say(line);
}

function start(cmd, args, pattern, from = "stdout") {
  const proc = spawn(cmd, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  return new Promise((ok, fail) => {
    let buf = "";
    proc[from].on("data", (c) => {
      buf += c;
      const m = pattern.exec(buf);
      if (m) ok({ proc, url: m[1] });
    });
    proc.once("exit", (code) => fail(new Error(`${cmd} exited ${code}: ${buf}`)));
  });
}

const tmp = mkdtempSync(path.join(tmpdir(), "probe-eras-"));
const config = path.join(tmp, "packs.yaml");
writeFileSync(
  config,
  `upstreams:\n  fx:\n    command: node\n    args: ["${path.join(root, "test/fixtures/fixture-server.mjs")}"]\n`,
);
const procs = [];
try {
  if (only !== "b") {
    say("== (a) toolpacks serve (HTTP) in front of fixture-server.mjs");
    const tp = await start(
      process.execPath,
      [path.join(root, "dist/cli.js"), "serve", config, "--port", "0"],
      /listening on (http:\/\/[^\s/]+)/,
      "stderr",
    );
    procs.push(tp.proc);
    const url = new URL(`${tp.url.replace(/\/$/, "")}/mcp`);
    for (const [name, negotiation] of MODES) {
      await attempt(
        `toolpacks http ${name}`,
        (log) => new StreamableHTTPClientTransport(url, { fetch: tracingFetch(log) }),
        negotiation,
        {
          name: "echo",
          arguments: { text: "hi" },
        },
      );
    }
    say("== (a) toolpacks serve --transport stdio");
    for (const [name, negotiation] of MODES) {
      await attempt(
        `toolpacks stdio ${name}`,
        () =>
          new StdioClientTransport({
            command: process.execPath,
            args: [path.join(root, "dist/cli.js"), "serve", config, "--transport", "stdio"],
            stderr: "ignore",
          }),
        negotiation,
        { name: "echo", arguments: { text: "hi" } },
      );
    }
  }
  if (only !== "a") {
    say("== (b) modern-server.mjs (HTTP, createMcpHandler)");
    const ms = await start(
      process.execPath,
      [path.join(root, "test/fixtures/modern-server.mjs")],
      /^(http:\/\/\S+)$/m,
    );
    procs.push(ms.proc);
    for (const [name, negotiation] of MODES) {
      await attempt(
        `modern http ${name}`,
        (log) => new StreamableHTTPClientTransport(new URL(ms.url), { fetch: tracingFetch(log) }),
        negotiation,
        {
          name: "confirm_action",
          arguments: { action: "deploy" },
        },
      );
    }
    say("== (b) modern-server.mjs --stdio (serveStdio)");
    for (const [name, negotiation] of MODES) {
      await attempt(
        `modern stdio ${name}`,
        () =>
          new StdioClientTransport({
            command: process.execPath,
            args: [path.join(root, "test/fixtures/modern-server.mjs"), "--stdio"],
            stderr: "ignore",
          }),
        negotiation,
        { name: "confirm_action", arguments: { action: "deploy" } },
      );
    }
  }
} finally {
  for (const p of procs) p.kill("SIGTERM");
  rmSync(tmp, { recursive: true, force: true });
}
