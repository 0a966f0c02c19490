/**
 * The upstream client that replaced the SDK's Client, against a real SDK Server in process: the handshake, lists,
 * server→client requests and their cancellation (id 0 included), timeouts and closing. Also the protocol constants
 * it shares with the rest of the proxy, which must stay the SDK's.
 */
import { PassThrough } from "node:stream";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import * as sdk from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, test, vi } from "vitest";
import * as ours from "../../src/protocol.js";
import { StdioServerTransport } from "../../src/stdio-server.js";
import { UpstreamRpcClient } from "../../src/upstream/rpc-client.js";

type Seen = { notifications: string[]; requests: { method: string; signal: AbortSignal }[] };

async function pair(
  onRequest: (r: { method: string }, signal: AbortSignal) => Promise<unknown> = async () => ({}),
) {
  const server = new Server(
    { name: "upstream", version: "1.0.0" },
    { capabilities: { tools: { listChanged: true }, prompts: {} } },
  );
  server.setRequestHandler(sdk.ListToolsRequestSchema, () => ({
    tools: [{ name: "echo", inputSchema: { type: "object" }, "x-extra": 1 }],
  }));
  const seen: Seen = { notifications: [], requests: [] };
  const client = new UpstreamRpcClient(
    { name: "toolpacks", version: "0" },
    { sampling: {} },
    {
      onNotification: (n) => seen.notifications.push(n.method),
      onRequest: (r, signal) => {
        seen.requests.push({ method: r.method, signal });
        return onRequest(r, signal);
      },
    },
  );
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  await client.connect(a, { timeout: 5000 });
  return { server, client, seen, transport: a };
}

/** A peer that answers initialize (with `version`) and nothing else, recording what it is sent. */
async function silentPeer(version = "2025-06-18") {
  const sent: unknown[] = [];
  const client = new UpstreamRpcClient(
    { name: "t", version: "0" },
    {},
    { onNotification: () => {}, onRequest: async () => ({}) },
  );
  const [a, b] = InMemoryTransport.createLinkedPair();
  b.onmessage = (m) => {
    sent.push(m);
    const r = m as { id?: number; method?: string };
    if (r.method !== "initialize") return;
    const result = { protocolVersion: version, capabilities: {}, serverInfo: { name: "s", version: "0" } };
    void b.send({ jsonrpc: "2.0", id: r.id!, result });
  };
  await b.start();
  const connected = client.connect(a, { timeout: 5000 });
  return {
    client,
    sent,
    connected: await connected.then(
      () => true,
      (e: unknown) => e,
    ),
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("the upstream client", () => {
  test("initializes as the SDK client does and lists raw, unknown keys kept", async () => {
    const { server, client } = await pair();
    expect(server.getClientVersion()).toEqual({ name: "toolpacks", version: "0" });
    expect(server.getClientCapabilities()).toEqual({ sampling: {} });
    expect(client.getServerCapabilities()).toMatchObject({ tools: { listChanged: true }, prompts: {} });
    expect(await client.request("tools/list", {}, { timeout: 5000 })).toEqual({
      tools: [{ name: "echo", inputSchema: { type: "object" }, "x-extra": 1 }],
    });
    await client.close();
  });

  test("an upstream's error keeps its code, message and data", async () => {
    const { client } = await pair();
    const err = await client.request("nope/nothing", {}, { timeout: 5000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ours.McpError);
    expect(err).toMatchObject({ code: -32601 });
    await client.close();
  });

  test("a server→client request is answered by the handler, and ping by the client itself", async () => {
    const { server, client, seen } = await pair(async () => ({
      role: "assistant",
      content: { type: "text", text: "hi" },
      model: "m",
    }));
    await server.ping();
    const answer = await server.createMessage({ messages: [], maxTokens: 1 });
    expect(answer).toMatchObject({ model: "m" });
    expect(seen.requests.map((r) => r.method)).toEqual(["sampling/createMessage"]);
    await client.close();
  });

  test("the cancellation of the upstream's first server→client request (id 0) aborts its handler", async () => {
    let release!: () => void;
    const { server, client, seen } = await pair(
      (_r, signal) =>
        new Promise((ok) => {
          release = () => ok({});
          signal.addEventListener("abort", () => ok({}));
        }),
    );
    const controller = new AbortController();
    const asked = server.createMessage({ messages: [], maxTokens: 1 }, { signal: controller.signal });
    await vi.waitFor(() => expect(seen.requests).toHaveLength(1));
    controller.abort("no longer needed");
    await expect(asked).rejects.toThrow();
    await vi.waitFor(() => expect(seen.requests[0]!.signal.aborted).toBe(true));
    release();
    await client.close();
  });

  test("notifications reach the handler; list changes included", async () => {
    const { server, client, seen } = await pair();
    await server.sendToolListChanged();
    await vi.waitFor(() => expect(seen.notifications).toEqual(["notifications/tools/list_changed"]));
    await client.close();
  });

  test("a request that times out is cancelled upstream and fails with -32001", async () => {
    const { client, sent } = await silentPeer();
    vi.useFakeTimers();
    const late = client.request("tools/list", {}, { timeout: 1000 }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1001);
    expect(await late).toMatchObject({ code: -32001, data: { timeout: 1000 } });
    expect(sent.at(-1)).toMatchObject({ method: "notifications/cancelled", params: { requestId: 1 } });
    await client.close();
  });

  test("closing fails what is in flight with Connection closed, and says so once", async () => {
    const { client, sent } = await silentPeer();
    let closed = 0;
    client.onclose = () => closed++;
    const pending = client.request("never/answered", {}, { timeout: 60_000 }).catch((e: unknown) => e);
    await vi.waitFor(() => expect(sent.at(-1)).toMatchObject({ method: "never/answered" }));
    await client.close();
    expect(await pending).toMatchObject({ code: -32000, message: "MCP error -32000: Connection closed" });
    await client.close();
    expect(closed).toBe(1);
  });

  test("an upstream speaking an unsupported protocol version is refused", async () => {
    const { connected } = await silentPeer("1999-01-01");
    expect(String(connected)).toContain("protocol version is not supported: 1999-01-01");
  });
});

describe("the protocol constants", () => {
  test("the error codes and protocol versions are the SDK's", () => {
    for (const [name, code] of Object.entries(ours.ErrorCode)) {
      expect(sdk.ErrorCode[name as keyof typeof sdk.ErrorCode], name).toBe(code);
    }
    expect(ours.LATEST_PROTOCOL_VERSION).toBe(sdk.LATEST_PROTOCOL_VERSION);
    expect(ours.SUPPORTED_PROTOCOL_VERSIONS).toEqual(sdk.SUPPORTED_PROTOCOL_VERSIONS);
    expect(new ours.McpError(-32602, "bad", { x: 1 })).toMatchObject({
      ...new sdk.McpError(-32602, "bad", { x: 1 }),
      message: new sdk.McpError(-32602, "bad").message,
    });
  });
});

describe("the stdio server transport", () => {
  test("reads messages split across chunks and skips what is not JSON-RPC, saying so", async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const t = new StdioServerTransport(input, output);
    const got: unknown[] = [];
    const errors: string[] = [];
    t.onmessage = (m) => got.push(m);
    t.onerror = (e) => errors.push(e.message);
    await t.start();
    input.write('{"jsonrpc":"2.0","id":0,"met');
    input.write('hod":"ping"}\nnot json\n[1]\n\n{"jsonrpc":"2.0","method":"x"}\n');
    await vi.waitFor(() => expect(got).toHaveLength(2));
    expect(got[0]).toEqual({ jsonrpc: "2.0", id: 0, method: "ping" });
    expect(errors).toEqual([
      "stdin: a line that is not JSON was dropped",
      "stdin: a line that is not JSON-RPC 2.0 was dropped",
    ]);
    await t.send({ jsonrpc: "2.0", id: 0, result: {} });
    expect(output.read()?.toString()).toBe('{"jsonrpc":"2.0","id":0,"result":{}}\n');
    let closed = false;
    t.onclose = () => {
      closed = true;
    };
    await t.close();
    expect(closed).toBe(true);
    expect(input.isPaused()).toBe(true);
  });

  test("a line longer than the bound closes the transport instead of growing without end", async () => {
    const input = new PassThrough();
    const t = new StdioServerTransport(input, new PassThrough(), 1024);
    const errors: string[] = [];
    let closed = false;
    t.onerror = (e) => errors.push(e.message);
    t.onclose = () => {
      closed = true;
    };
    await t.start();
    input.write("x".repeat(2048));
    await vi.waitFor(() => expect(closed).toBe(true));
    expect(errors).toEqual(["a message on stdin is longer than 1024 bytes; closing"]);
  });
});
