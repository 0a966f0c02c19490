/**
 * The one JSON-RPC peer, against a real SDK Server in process (over the SDK's in-memory transport) and against
 * raw messages: the 2025 handshake of an upstream channel, lists kept raw, errors verbatim, server→client
 * requests and their cancellation (id 0 included), messages tied to a call, progress, timeouts and closing. Also
 * the protocol constants the proxy shares with the SDK, which must stay the SDK's.
 */

import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import * as sdk from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, test, vi } from "vitest";
import { silentLogger } from "../../src/log.js";
import * as ours from "../../src/protocol.js";
import type { ChannelEvents } from "../../src/upstream/channel.js";
import { openLegacy } from "../../src/upstream/legacy-channel.js";
import { WireError } from "../../src/wire/errors.js";
import { type Message, RpcPeer } from "../../src/wire/peer.js";
import type { Signal } from "../../src/wire/signal.js";
import { catalogOf } from "../helpers/catalog.js";

const spec = catalogOf("upstreams:\n  up:\n    command: node\n").upstreams.get("up")!;

type Seen = { notifications: string[]; requests: { method: string; signal: Signal }[] };

/** A 2025 channel to a real SDK Server, its untied traffic recorded. */
async function channelTo(
  onRequest: (r: { method: string }, signal: Signal) => Promise<unknown> = async () => ({}),
) {
  const server = new Server(
    { name: "upstream", version: "1.0.0" },
    { capabilities: { tools: { listChanged: true }, prompts: {}, logging: {} } },
  );
  server.setRequestHandler(sdk.ListToolsRequestSchema, () => ({
    tools: [{ name: "echo", inputSchema: { type: "object" }, "x-extra": 1 }],
  }));
  const seen: Seen = { notifications: [], requests: [] };
  let closed = 0;
  const events: ChannelEvents = {
    onClosed: () => closed++,
    onListChanged: () => {},
    onNotification: (n) => void seen.notifications.push(n.method),
    onServerRequest: (r, signal) => {
      seen.requests.push({ method: r.method, signal });
      return onRequest(r, signal);
    },
  };
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  const built = { transport: a, pid: () => null, stderrTail: [], failure: () => undefined };
  const channel = await openLegacy(
    {
      spec,
      owned: false,
      built,
      clientInfo: { name: "toolpacks", version: "0" },
      events,
      logger: silentLogger,
    },
    5000,
  );
  return { server, channel, seen, closed: () => closed };
}

/** A peer whose other side records what it is sent and answers only what `answer` says. */
function rawPair(answer: (m: Message) => Message | undefined = () => undefined) {
  const sent: Message[] = [];
  let peer!: RpcPeer;
  const send = async (m: Message) => {
    sent.push(m);
    const reply = answer(m);
    if (reply) queueMicrotask(() => peer.receive(reply));
  };
  const untied: string[] = [];
  peer = new RpcPeer(send, { notification: (n) => void untied.push(n.method) });
  return { peer, sent, untied };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("an upstream channel of the 2025 era", () => {
  test("initializes as the SDK client does and lists raw, unknown keys kept", async () => {
    const { server, channel } = await channelTo();
    expect(server.getClientVersion()).toEqual({ name: "toolpacks", version: "0" });
    expect(server.getClientCapabilities()).toEqual({ sampling: {}, elicitation: { form: {}, url: {} } });
    expect(channel.capabilities).toMatchObject({ tools: { listChanged: true }, prompts: {} });
    const offer = await channel.listOffer(() => {});
    expect(offer.tools).toEqual([{ name: "echo", inputSchema: { type: "object" }, "x-extra": 1 }]);
    await channel.close();
  });

  test("an upstream's error keeps its code, message and data, with no prefix added", async () => {
    const { channel } = await channelTo();
    const err = await channel.request("nope/nothing", {}, {}, 5000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WireError);
    expect(err).toMatchObject({ code: -32601, message: "Method not found" });
    await channel.close();
  });

  test("a server→client request is handed on, and ping answered by the channel itself", async () => {
    const { server, channel, seen } = await channelTo(async () => ({
      role: "assistant",
      content: { type: "text", text: "hi" },
      model: "m",
    }));
    await server.ping();
    const answer = await server.createMessage({ messages: [], maxTokens: 1 });
    expect(answer).toMatchObject({ model: "m" });
    expect(seen.requests.map((r) => r.method)).toEqual(["sampling/createMessage"]);
    await channel.close();
  });

  test("the cancellation of the upstream's first server→client request (id 0) aborts its handler", async () => {
    let release!: () => void;
    const { server, channel, seen } = await channelTo(
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
    await channel.close();
  });

  test("notifications tied to no call are handed on; list changes included", async () => {
    const { server, channel, seen } = await channelTo();
    await server.sendToolListChanged();
    await vi.waitFor(() => expect(seen.notifications).toEqual(["notifications/tools/list_changed"]));
    await channel.close();
  });

  test("closing fails what is in flight with Connection closed, and the channel says nothing of itself", async () => {
    const { opened, closed } = await silentUpstream("2025-06-18");
    const channel = (await opened) as Awaited<ReturnType<typeof openLegacy>>;
    const pending = channel.request("never/answered", {}, {}, 60_000).catch((e: unknown) => e);
    await channel.close();
    expect(await pending).toMatchObject({ code: -32000, message: "Connection closed" });
    expect(closed()).toBe(0);
  });

  test("an upstream speaking an unsupported protocol version is refused", async () => {
    const { opened } = await silentUpstream("1999-01-01");
    expect(String(await opened)).toContain("protocol version is not supported: 1999-01-01");
  });
});

/** An upstream that answers initialize with `version` and nothing else. */
async function silentUpstream(version: string) {
  const [a, b] = InMemoryTransport.createLinkedPair();
  b.onmessage = (m) => {
    const r = m as { id?: number; method?: string };
    if (r.method === "initialize")
      void b.send({ jsonrpc: "2.0", id: r.id!, result: { protocolVersion: version, capabilities: {} } });
  };
  await b.start();
  let closed = 0;
  const built = { transport: a, pid: () => null, stderrTail: [], failure: () => undefined };
  const events = { onClosed: () => void closed++, onListChanged: () => {} };
  const opened = openLegacy(
    { spec, owned: false, built, clientInfo: { name: "t", version: "0" }, events, logger: silentLogger },
    5000,
  ).catch((e: unknown) => e);
  return { opened, closed: () => closed };
}

describe("the JSON-RPC peer", () => {
  test("ids start at 1 and answers settle by id; an error comes back verbatim", async () => {
    const { peer, sent } = rawPair((m) =>
      m.method === "a"
        ? { jsonrpc: "2.0", id: m.id!, result: { ok: 1 } }
        : { jsonrpc: "2.0", id: m.id!, error: { code: -32042, message: "custom", data: { x: 1 } } },
    );
    expect(await peer.request("a")).toEqual({ ok: 1 });
    expect(await peer.request("b").catch((e: unknown) => e)).toMatchObject({
      code: -32042,
      message: "custom",
      data: { x: 1 },
    });
    expect(sent.map((m) => m.id)).toEqual([1, 2]);
  });

  test("a request that times out is cancelled at the other side and fails with -32001", async () => {
    const { peer, sent } = rawPair();
    vi.useFakeTimers();
    const late = peer.request("tools/list", {}, { timeoutMs: 1000 }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1001);
    expect(await late).toMatchObject({ code: -32001, data: { timeout: 1000 } });
    expect(sent.at(-1)).toMatchObject({ method: "notifications/cancelled", params: { requestId: 1 } });
    expect(peer.waiting).toBe(0);
  });

  test("progress comes under the request's own token, resets the timeout, and reaches only its request", async () => {
    const { peer, sent, untied } = rawPair();
    vi.useFakeTimers();
    const progress: unknown[] = [];
    const call = peer.request(
      "tools/call",
      { name: "x" },
      { timeoutMs: 1000, onProgress: (p) => progress.push(p) },
    );
    const token = (sent[0]!.params!._meta as { progressToken: number }).progressToken;
    await vi.advanceTimersByTimeAsync(900);
    peer.receive({
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: { progressToken: token, progress: 1 },
    });
    await vi.advanceTimersByTimeAsync(900);
    peer.receive({
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: { progressToken: 99, progress: 2 },
    });
    peer.receive({ jsonrpc: "2.0", id: 1, result: { done: true } });
    expect(await call).toEqual({ done: true });
    expect(progress).toEqual([{ progress: 1 }]);
    expect(untied).toEqual(["notifications/progress"]);
  });

  test("a cancelled request tells the other side once and fails with the signal's reason", async () => {
    const { peer, sent } = rawPair();
    const controller = new AbortController();
    const call = peer.request("tools/call", {}, { signal: controller.signal }).catch((e: unknown) => e);
    controller.abort(new Error("the client went away"));
    expect(String(await call)).toContain("the client went away");
    expect(sent.filter((m) => m.method === "notifications/cancelled")).toHaveLength(1);
    peer.receive({ jsonrpc: "2.0", id: 1, result: {} });
  });

  test("what the other side ties to one request goes to that request's handlers only", async () => {
    const { peer, untied } = rawPair();
    const tied: string[] = [];
    const asked: string[] = [];
    const call = peer.request(
      "tools/call",
      {},
      {
        onNotification: (n) => void tied.push(n.method),
        onRequest: async (r) => {
          asked.push(r.method);
          return { answered: true };
        },
      },
    );
    peer.receive({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info" } }, 1);
    peer.receive({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info" } });
    peer.receive({ jsonrpc: "2.0", id: 7, method: "sampling/createMessage", params: {} }, 1);
    await vi.waitFor(() => expect(asked).toEqual(["sampling/createMessage"]));
    peer.receive({ jsonrpc: "2.0", id: 1, result: {} });
    await call;
    expect(tied).toEqual(["notifications/message"]);
    expect(untied).toEqual(["notifications/message"]);
  });

  test("a request of the other side is answered once; one cancelled gets no answer and is abandoned", async () => {
    const sent: Message[] = [];
    const abandoned: unknown[] = [];
    let release!: () => void;
    const peer = new RpcPeer((m) => void sent.push(m), {
      request: (r, signal) =>
        r.method === "slow"
          ? new Promise((ok) => {
              release = () => ok({});
              signal.addEventListener("abort", () => ok({}));
            })
          : Promise.resolve({ pong: true }),
      abandoned: (id) => void abandoned.push(id),
    });
    peer.receive({ jsonrpc: "2.0", id: 0, method: "slow" });
    peer.receive({ jsonrpc: "2.0", id: "b", method: "fast" });
    expect(peer.serving(0)).toBe(true);
    peer.receive({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 0 } });
    release();
    await vi.waitFor(() => expect(abandoned).toEqual([0]));
    expect(sent).toEqual([{ jsonrpc: "2.0", id: "b", result: { pong: true } }]);
  });

  test("closing fails every request of ours with the reason, and later ones at once", async () => {
    const { peer } = rawPair();
    const pending = peer.request("never").catch((e: unknown) => e);
    peer.close();
    expect(await pending).toMatchObject({ code: -32000, message: "Connection closed" });
    expect(await peer.request("later").catch((e: unknown) => e)).toMatchObject({ code: -32000 });
  });

  test("a request whose send throws fails at once with that error and leaves nothing waiting", async () => {
    const peer = new RpcPeer(() => {
      throw new TypeError("Do not know how to serialize a BigInt");
    });
    const err = await peer.request("tools/call", {}, { timeoutMs: 60_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect(peer.waiting).toBe(0);
  });
});

describe("the protocol constants", () => {
  test("the error codes and protocol versions are the SDK's", () => {
    for (const [name, code] of Object.entries(ours.ErrorCode)) {
      expect(sdk.ErrorCode[name as keyof typeof sdk.ErrorCode], name).toBe(code);
    }
    expect(ours.LATEST_PROTOCOL_VERSION).toBe(sdk.LATEST_PROTOCOL_VERSION);
    expect(ours.SUPPORTED_PROTOCOL_VERSIONS).toEqual(sdk.SUPPORTED_PROTOCOL_VERSIONS);
  });
});
