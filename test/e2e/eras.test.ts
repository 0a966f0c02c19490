/**
 * MCP 2026-07-28 clients on the same URL as 2025 ones, through the real CLI, with the real SDK v2 client and
 * raw requests: the era is read per request, `server/discover` describes the selection, every result carries
 * `resultType` and our serverInfo, lists carry cache hints, and a 2025 upstream's server→client requests reach
 * a 2026-07-28 client as `input_required` rounds over a parked call (bridge B3).
 */
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { readEvents, waitForEvent } from "../helpers/mcp.js";
import { alive, FIXTURE, httpClient, ROOT, type Served, serve, tempDir } from "../helpers/proc.js";

const PROBE = join(ROOT, "test/helpers/probe-server.mjs");
const V = "2026-07-28";
const tmp = tempDir();
const probeEvents = join(tmp.dir, "probe.events");
const config = tmp.file(
  "packs.yaml",
  `
upstreams:
  fx:
    command: node
    args: ["${FIXTURE}", "--notify-grow"]
  every:
    command: mcp-server-everything
    isolation: per-session
    prefix: e_
  brief:
    command: mcp-server-everything
    isolation: per-session
    prefix: b_
    input_timeout: 2
  probe:
    command: node
    args: ["${PROBE}", "--events-file", "${probeEvents}"]
    prefix: p_
  keyed:
    command: node
    args: ["${FIXTURE}", "--tools", "echo", "--name", "keyed"]
    header_env: { x-api-key: API_KEY }
    prefix: k_
toolsets:
  fx: { tools: ["fx/*"] }
  every: { tools: ["every/*"], default: false }
  brief: { tools: [brief/trigger-elicitation-request], default: false }
  probe: { tools: ["probe/*"], prompts: ["probe/*"], resources: ["probe/**"], default: false }
  keyed: { tools: [keyed/echo], default: false }
`,
);
let served: Served;
let other: Served;
const clients: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  [served, other] = await Promise.all([
    serve([config], { TOOLPACKS_SESSION_SECRET: "one-secret-0123456789" }),
    serve([config], { TOOLPACKS_SESSION_SECRET: "one-secret-0123456789" }),
  ]);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await Promise.all([served?.stop(), other?.stop()]);
  tmp.cleanup();
});

const envelope = (caps: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  "io.modelcontextprotocol/protocolVersion": V,
  "io.modelcontextprotocol/clientCapabilities": caps,
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
  ...extra,
});

/** One raw 2026-07-28 POST; `name` fills Mcp-Name. */
async function post(
  url: string,
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  const name = (params.name ?? params.uri) as string | undefined;
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": V,
      "mcp-method": method,
      ...(name ? { "mcp-name": name } : {}),
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method,
      params: { ...params, _meta: { ...envelope(), ...(params._meta as object) } },
    }),
  });
  const text = await res.text();
  const messages = (res.headers.get("content-type") ?? "").includes("text/event-stream")
    ? text
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => JSON.parse(l.slice(5)))
    : text
      ? [JSON.parse(text)]
      : [];
  const answer = messages.find((m) => m.id === 1) as
    | { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } }
    | undefined;
  return { status: res.status, answer, messages, session: res.headers.get("mcp-session-id") };
}

async function modern(url: string, capabilities: Record<string, unknown> = {}) {
  const c = new Client(
    { name: "v2", version: "1" },
    { versionNegotiation: { mode: { pin: V } }, capabilities },
  );
  await c.connect(new StreamableHTTPClientTransport(new URL(url)));
  clients.push(c);
  return c;
}

describe("one URL, two eras", () => {
  test("a 2026-07-28 client is served without a session, beside a 2025 client", async () => {
    const c = await modern(served.url());
    expect(c.getProtocolEra()).toBe("modern");
    const legacy = await httpClient(served.url());
    clients.push(legacy);
    const names = (await c.listTools()).tools.map((t) => t.name);
    expect(names).toEqual((await legacy.listTools()).tools.map((t) => t.name));
    const r = await c.callTool({ name: "echo", arguments: { text: "hi" } });
    expect(r.content).toEqual([{ type: "text", text: "hi" }]);
    const raw = await post(served.url(), "tools/list");
    expect(raw.session).toBeNull();
  });

  test("server/discover describes the URL's selection: versions, capabilities, instructions, serverInfo", async () => {
    const { status, answer } = await post(served.url("only=probe"), "server/discover");
    expect(status).toBe(200);
    expect(answer?.result).toMatchObject({
      resultType: "complete",
      supportedVersions: [V],
      capabilities: { tools: { listChanged: true }, prompts: {}, resources: {} },
      cacheScope: "public",
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "toolpacks" } },
    });
    expect(typeof answer?.result?.ttlMs).toBe("number");
  });

  test("every result carries resultType and toolpacks' serverInfo; lists carry ttlMs and cacheScope", async () => {
    const list = await post(served.url(), "tools/list");
    expect(list.answer?.result).toMatchObject({
      resultType: "complete",
      cacheScope: "public",
      ttlMs: 60_000,
    });
    const call = await post(served.url(), "tools/call", { name: "echo", arguments: { text: "x" } });
    expect(call.answer?.result).toMatchObject({ resultType: "complete" });
    expect(call.answer?.result).not.toHaveProperty("ttlMs");
    const keyed = await post(served.url("only=keyed"), "tools/list", {}, { "x-api-key": "alpha-key-1" });
    expect(keyed.answer?.result).toMatchObject({ cacheScope: "private" });
  });

  test("a version not served, mismatched headers and removed methods get the spec's errors", async () => {
    const wrong = await fetch(served.url(), {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "mcp-protocol-version": "2027-01-01",
        "mcp-method": "tools/list",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        params: { _meta: { ...envelope(), "io.modelcontextprotocol/protocolVersion": "2027-01-01" } },
      }),
    });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { error: unknown }).error).toMatchObject({
      code: -32022,
      data: { requested: "2027-01-01" },
    });
    const mismatch = await post(
      served.url(),
      "tools/call",
      { name: "echo", arguments: { text: "x" } },
      { "mcp-name": "add" },
    );
    expect(mismatch.status).toBe(400);
    expect(mismatch.answer?.error?.code).toBe(-32020);
    const ping = await post(served.url(), "ping");
    expect(ping.status).toBe(404);
    expect(ping.answer?.error?.code).toBe(-32601);
  });

  test("a resource not found is -32602 for a 2026-07-28 client", async () => {
    const r = await post(served.url("only=fx"), "resources/read", { uri: "file:///etc/passwd" });
    expect(r.answer?.error?.code).toBe(-32602);
  });

  test("unknown _meta keys, trace context included, reach the upstream; the envelope does not", async () => {
    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const r = await post(served.url("only=probe"), "tools/call", {
      name: "p_echo_meta",
      arguments: {},
      _meta: { traceparent, "x-vendor": "v" },
    });
    const content = (r.answer?.result?.content ?? []) as { text: string }[];
    const meta = JSON.parse(content[0]!.text) as Record<string, unknown>;
    expect(meta).toMatchObject({ traceparent, "x-vendor": "v" });
    expect(Object.keys(meta).filter((k) => k.startsWith("io.modelcontextprotocol/"))).toEqual([]);
  });

  test("a listen stream hears the list changes of what its URL sees, tagged with its id", async () => {
    const controller = new AbortController();
    const res = await fetch(served.url(), {
      method: "POST",
      signal: controller.signal,
      headers: {
        "content-type": "application/json",
        accept: "text/event-stream, application/json",
        "mcp-protocol-version": V,
        "mcp-method": "subscriptions/listen",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 42,
        method: "subscriptions/listen",
        params: { _meta: envelope(), notifications: { toolsListChanged: true } },
      }),
    });
    const reader = res.body!.getReader();
    let text = "";
    const until = async (what: RegExp) => {
      while (!what.test(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before ${what}: ${text}`);
        text += new TextDecoder().decode(value);
      }
    };
    await until(/subscriptions\/acknowledged/);
    await post(served.url(), "tools/call", { name: "grow", arguments: {} });
    await until(/tools\/list_changed/);
    controller.abort();
    const changed = text.split("\n").filter((l) => l.includes("tools/list_changed"))[0]!;
    expect(JSON.parse(changed.slice(5)).params._meta).toEqual({
      "io.modelcontextprotocol/subscriptionId": 42,
    });
  });
});

describe("bridge B3: a 2026-07-28 client and a 2025 upstream", () => {
  test("an elicitation of the upstream reaches the client as input_required and the call completes", async () => {
    const c = await modern(served.url("only=every"), { elicitation: { form: {} } });
    c.setRequestHandler("elicitation/create", async () => ({
      action: "accept",
      content: { name: "Ada", color: "red" },
    }));
    const r = await c.callTool({ name: "e_trigger-elicitation-request", arguments: {} });
    expect(JSON.stringify(r.content)).toContain("Name: Ada");
  });

  test("an SDK v2 client in auto mode answers an upstream's sampling and URL elicitation through input_required", async () => {
    const c = new Client(
      { name: "v2-auto", version: "1" },
      { versionNegotiation: { mode: "auto" }, capabilities: { sampling: {}, elicitation: { url: {} } } },
    );
    c.setRequestHandler("sampling/createMessage", async () => ({
      role: "assistant",
      content: { type: "text", text: "Paris" },
      model: "fake",
    }));
    let asked: unknown;
    c.setRequestHandler("elicitation/create", async (request) => {
      asked = request.params;
      return { action: "accept" };
    });
    await c.connect(new StreamableHTTPClientTransport(new URL(served.url("only=every"))));
    clients.push(c);
    expect(c.getNegotiatedProtocolVersion()).toBe(V);
    const sampled = await c.callTool({
      name: "e_trigger-sampling-request",
      arguments: { prompt: "capital of France?" },
    });
    expect(JSON.stringify(sampled.content)).toContain("Paris");
    const url = await c.callTool({
      name: "e_trigger-url-elicitation",
      arguments: { url: "https://example.com/authorize" },
    });
    expect(asked).toMatchObject({ mode: "url", url: "https://example.com/authorize" });
    expect(JSON.stringify(url.content)).toMatch(/accept/i);
  });

  test("a tampered requestState is refused and does not cancel the waiting call", async () => {
    const first = await post(served.url("only=every"), "tools/call", {
      name: "e_trigger-elicitation-request",
      arguments: {},
      _meta: envelope({ elicitation: { form: {} } }),
    });
    expect(first.answer?.result).toMatchObject({ resultType: "input_required" });
    const { inputRequests, requestState } = first.answer!.result as {
      inputRequests: Record<string, unknown>;
      requestState: string;
    };
    const key = Object.keys(inputRequests)[0]!;
    const retry = (state: string) =>
      post(served.url("only=every"), "tools/call", {
        name: "e_trigger-elicitation-request",
        arguments: {},
        inputResponses: { [key]: { action: "accept", content: { name: "Grace", color: "blue" } } },
        requestState: state,
        _meta: envelope({ elicitation: { form: {} } }),
      });
    const tampered = `${requestState.slice(0, -2)}${requestState.endsWith("A") ? "BB" : "AA"}`;
    expect((await retry(tampered)).answer?.error?.code).toBe(-32602);
    expect((await retry("made-up")).answer?.error?.code).toBe(-32602);
    const ok = await retry(requestState);
    expect(JSON.stringify(ok.answer?.result)).toContain("Name: Grace");
    // Single use: the same state again finds no parked call.
    expect((await retry(requestState)).answer?.error?.code).toBe(-32602);
  });

  test("a retry on another replica is refused clearly, never run again there", async () => {
    const first = await post(served.url("only=every"), "tools/call", {
      name: "e_trigger-elicitation-request",
      arguments: {},
      _meta: envelope({ elicitation: { form: {} } }),
    });
    const { requestState } = first.answer!.result as { requestState: string };
    const elsewhere = await post(other.url("only=every"), "tools/call", {
      name: "e_trigger-elicitation-request",
      arguments: {},
      inputResponses: { r1: { action: "decline" } },
      requestState,
      _meta: envelope({ elicitation: { form: {} } }),
    });
    expect(elsewhere.answer?.error).toMatchObject({
      code: -32602,
      message: "Invalid or expired requestState",
    });
  });

  test("a retry that never comes: after input_timeout the upstream's request is answered with an error", async () => {
    const first = await post(served.url("only=brief"), "tools/call", {
      name: "b_trigger-elicitation-request",
      arguments: {},
      _meta: envelope({ elicitation: { form: {} } }),
    });
    const { inputRequests, requestState } = first.answer!.result as {
      inputRequests: Record<string, unknown>;
      requestState: string;
    };
    // input_timeout is 2 s for this upstream (brief): the parked call is cancelled, and says so.
    await expect
      .poll(() => served.stderr(), { timeout: 20_000 })
      .toMatch(/its client did not retry within input_timeout.*upstream[=":]+brief/);
    const late = await post(served.url("only=brief"), "tools/call", {
      name: "b_trigger-elicitation-request",
      arguments: {},
      inputResponses: { [Object.keys(inputRequests)[0]!]: { action: "decline" } },
      requestState,
      _meta: envelope({ elicitation: { form: {} } }),
    });
    expect(late.answer?.error?.code).toBe(-32602);
  });

  test("a call that needs a capability the request did not declare gets -32021 naming it", async () => {
    const r = await post(served.url("only=every"), "tools/call", {
      name: "e_trigger-elicitation-request",
      arguments: {},
    });
    expect(r.status).toBe(400);
    expect(r.answer?.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { elicitation: {} } },
    });
  });
});

describe("2026-07-28 over stdio", () => {
  test("a pinned SDK v2 client is served over stdio", async () => {
    const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");
    const c = new Client({ name: "v2-stdio", version: "1" }, { versionNegotiation: { mode: { pin: V } } });
    await c.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [join(ROOT, "dist/cli.js"), "serve", "--transport", "stdio", config],
        cwd: ROOT,
        stderr: "ignore",
      }),
    );
    clients.push(c);
    expect(c.getProtocolEra()).toBe("modern");
    const r = await c.callTool({ name: "echo", arguments: { text: "over stdio" } });
    expect(r.content).toEqual([{ type: "text", text: "over stdio" }]);
  });
});

void readEvents;
void waitForEvent;
void probeEvents;

test("a proxy that stops right after a 2026-07-28 call leaves no per-session upstream behind, even one still ending", async () => {
  // An anonymous 2026-07-28 request gets a per-session instance of its own, ended once its answer is sent;
  // stopping the proxy at that moment used to let the proxy exit before that instance's end was done.
  const own = await serve([config]);
  try {
    const r = await post(own.url("only=every"), "tools/call", {
      name: "e_echo",
      arguments: { message: "x" },
    });
    expect(r.answer?.result).toBeDefined();
  } finally {
    await own.stop();
  }
  const pids = [
    ...own.stderr().matchAll(/upstream ready upstream=every instance=session:\S+ .*pid=(\d+)/g),
  ].map((m) => Number(m[1]));
  expect(pids.length).toBeGreaterThan(0);
  expect(pids.filter(alive)).toEqual([]);
});
