/**
 * Bounds on the wire (SPEC §7.6): a 413 every fetch client can read, bounded output to a client that reads slowly
 * or not at all, a refused exposed bind, and an Origin never checked against the request's own Host.
 */

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { connect, type Socket } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { request as undiciRequest } from "undici";
import { describe, expect, test } from "vitest";
import { createToolpacks, loadCatalog } from "../../src/index.js";
import { perTest } from "../helpers/harness.js";
import { FIXTURE, rssDuring, runCli, serve, until } from "../helpers/proc.js";
import { initializeRequest, openSession, post, rawStatus, request } from "../helpers/wire.js";

const { tmp, cleanups, start } = perTest();

const MB = 1024 * 1024;

describe("413", () => {
  test("a body over the limit is answered 413 that the SDK's fetch client and undici read, every time", async () => {
    const served = await start(
      `upstreams:\n  main: { command: node, args: ["${FIXTURE}", "--tools", "echo"] }\n`,
    );
    const text = "x".repeat(5 * MB);
    const client = new Client({ name: "e2e", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(served.url())));
    cleanups.push(() => client.close());
    const { result, before, peak } = await rssDuring(served.proc.pid!, async () => {
      const seen: unknown[] = [];
      for (let i = 0; i < 10; i++) {
        seen.push(
          await client.callTool({ name: "echo", arguments: { text } }).then(
            () => "answered",
            (err: { code?: unknown; message: string }) => err.code ?? err.message,
          ),
        );
      }
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "echo", arguments: { text } },
      });
      for (let i = 0; i < 10; i++) {
        const res = await undiciRequest(served.url(), {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
          body,
        }).then(
          async (r) => {
            const answer = (await r.body.json()) as { error?: { message?: string } };
            return `${r.statusCode} ${answer.error?.message}`;
          },
          (err: { code?: string; message: string }) => err.code ?? err.message,
        );
        seen.push(res);
      }
      return seen;
    });
    expect(result.slice(0, 10)).toEqual(Array(10).fill(413));
    expect(result.slice(10)).toEqual(Array(10).fill("413 Payload Too Large: the limit is 4194304 bytes"));
    // The client's session still serves: the connection was read to its end, not cut.
    expect(await client.callTool({ name: "echo", arguments: { text: "small" } })).toMatchObject({
      content: [{ type: "text", text: "small" }],
    });
    // Stated figure: 100 MB of refused bodies, read and dropped, add under 40 MB.
    expect(peak - before).toBeLessThan(40);
  });
});

/** A POST written on a raw socket that then never reads a byte of the answer. */
function neverRead(url: string, session: string, body: string): Socket {
  const u = new URL(url);
  const socket = connect({ host: u.hostname, port: Number(u.port) });
  socket.on("error", () => {});
  socket.pause();
  socket.write(
    [
      `POST ${u.pathname} HTTP/1.1`,
      `Host: ${u.host}`,
      "Content-Type: application/json",
      "Accept: application/json, text/event-stream",
      `Mcp-Session-Id: ${session}`,
      "Mcp-Protocol-Version: 2025-11-25",
      `Content-Length: ${Buffer.byteLength(body)}`,
      "",
      body,
    ].join("\r\n"),
  );
  return socket;
}

const SLOW_READERS = `
limits: { pending_output_bytes: 262144, stalled_reader_timeout: 2 }
upstreams:
  main: { command: node, args: ["${FIXTURE}", "--tools", "echo", "--progress-flood", "--big"] }
`;

describe("slow readers", () => {
  test("a client that never reads its SSE answer while the upstream floods progress costs bounded memory, and its connection is closed", async () => {
    const served = await start(SLOW_READERS);
    const { session } = await openSession(served.url());
    const honest = (await openSession(served.url())).session;
    const flood = JSON.stringify({
      jsonrpc: "2.0",
      id: 9,
      method: "tools/call",
      params: {
        name: "progress_flood",
        arguments: { count: 50_000, bytes: 4096 },
        _meta: { progressToken: "p" },
      },
    });
    const { before, peak } = await rssDuring(served.proc.pid!, async () => {
      const socket = neverRead(served.url(), session, flood);
      cleanups.push(async () => socket.destroy());
      await until(() => /notifications on it are dropped/.test(served.stderr()), "the dropping line", 30_000);
      // Another client is served meanwhile.
      const { answer } = await request(served.url(), honest, 1, "tools/call", {
        name: "echo",
        arguments: { text: "hi" },
      });
      expect(answer.result).toEqual({ content: [{ type: "text", text: "hi" }] });
      await until(
        () => /read nothing of its response/.test(served.stderr()),
        "the stalled reader closed",
        60_000,
      );
    });
    await post(
      served.url(),
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 9 } },
      { session },
    );
    const metrics = await (await fetch(`${served.base}/metrics`)).text();
    expect(metrics).toMatch(/toolpacks_limit_hits_total\{limit="stalled_reader_timeout"\} 1/);
    console.log("RSS growth", peak - before);
    // Stated figure: 200 MB of progress at a reader that takes none adds under 64 MB (it grew by all of it before).
    expect(peak - before).toBeLessThan(64);
  });

  test("a client that never reads a large JSON answer has its connection closed, and the server serves on", async () => {
    const served = await start(SLOW_READERS);
    const { session } = await openSession(served.url());
    const big = JSON.stringify({
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "big", arguments: { bytes: 16 * MB } },
    });
    const socket = neverRead(served.url(), session, big);
    cleanups.push(async () => socket.destroy());
    await until(
      () => /read nothing of its response/.test(served.stderr()),
      "the stalled reader closed",
      60_000,
    );
    const { answer } = await request(served.url(), session, 4, "tools/call", {
      name: "echo",
      arguments: { text: "on" },
    });
    expect(answer.result).toEqual({ content: [{ type: "text", text: "on" }] });
  });
});

describe("binding and origins", () => {
  test("serving on every interface without --allowed-host and without auth refuses to start, naming both ways out", async () => {
    const file = tmp.file(
      "bind.yaml",
      `upstreams:\n  main: { command: node, args: ["${FIXTURE}", "--tools", "echo"] }\n`,
    );
    const run = await runCli(["serve", "--host", "0.0.0.0", "--port", "0", file], {
      env: { TOOLPACKS_INSECURE_BIND: undefined },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/refusing to serve on 0\.0\.0\.0 without --allowed-host and without auth/);
    expect(run.stderr).toMatch(/--allowed-host/);
    expect(run.stderr).toMatch(/auth:/);
    expect(run.stderr).toMatch(/--insecure-bind/);
  });

  test("serving on a non-loopback address with --insecure-bind warns that anyone on the network can use it", async () => {
    const file = tmp.file(
      "insecure.yaml",
      `upstreams:\n  main: { command: node, args: ["${FIXTURE}", "--tools", "echo"] }\n`,
    );
    // 192.0.2.1 is documentation space (TEST-NET-1), no address of this machine: the warning comes before the
    // listen, which then fails, so nothing is ever bound beyond loopback.
    const run = await runCli(
      ["serve", "--host", "192.0.2.1", "--port", "0", "--insecure-bind", "--log-format", "text", file],
      { env: { TOOLPACKS_INSECURE_BIND: undefined } },
    );
    expect(run.stderr).toMatch(
      /warn +serving on 192\.0\.2\.1 with --insecure-bind, without --allowed-host and without auth: .*anyone on the network can use its upstreams/,
    );
    expect(run.stderr).toMatch(/cannot listen/);
    expect(run.code).toBe(1);
  });

  test("--insecure-bind on loopback, where it changes nothing, warns of nothing", async () => {
    const file = tmp.file(
      "loopback.yaml",
      `upstreams:\n  main: { command: node, args: ["${FIXTURE}", "--tools", "echo"] }\n`,
    );
    const served = await serve([file, "--insecure-bind"]);
    try {
      expect(served.stderr()).not.toMatch(/insecure-bind|warn/);
    } finally {
      await served.stop();
    }
  });

  test("an Origin is never accepted because it matches the request's own Host (DNS rebinding)", async () => {
    const file = tmp.file(
      "origin.yaml",
      `upstreams:\n  main: { command: node, args: ["${FIXTURE}", "--tools", "echo"] }\n`,
    );
    const loaded = loadCatalog([file]);
    if (!loaded.ok) throw new Error("config");
    // Embedded without allowedHosts: any Host passes (the host app knows where it listens), but no Origin does.
    const toolpacks = createToolpacks(loaded.catalog, {
      logger: false,
      allowedOrigins: ["https://app.example.com"],
    });
    const server = createServer((req, res) => {
      void toolpacks.handle(req, res);
    });
    server.listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    cleanups.push(async () => {
      await toolpacks.close();
      await new Promise((r) => server.close(r));
    });
    const port = (server.address() as AddressInfo).port;
    const url = `http://127.0.0.1:${port}/mcp`;
    const rebound = `rebind.attacker.example:${port}`;
    const status = (headers: Record<string, string>) => rawStatus(url, headers, initializeRequest());
    expect(await status({ host: rebound, origin: `http://${rebound}` })).toBe(403);
    expect(await status({ host: rebound })).toBe(200);
    expect(await status({ host: rebound, origin: "https://app.example.com" })).toBe(200);
    expect((await post(url, initializeRequest())).status).toBe(200);
  });
});
