/**
 * What passes through the proxy, against real servers: server-everything, the conformance fixture, the fixture
 * server and a probe that records what reaches the upstream. Counted on the wire, not through the SDK client
 * (which drops a final progress notification arriving with its result).
 */
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LATEST_PROTOCOL_VERSION,
  ListRootsRequestSchema,
  ResultSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  type Recorded,
  type RecordedOptions,
  readEvents,
  recordedClient,
  waitForEvent,
} from "../helpers/mcp.js";
import { FIXTURE, httpClient, ROOT, type Served, serve, tempDir, toolNames } from "../helpers/proc.js";

const CONFORMANCE = join(ROOT, "test/fixtures/conformance-server.mjs");
const PROBE = join(ROOT, "test/helpers/probe-server.mjs");
const tmp = tempDir();
const mainEvents = join(tmp.dir, "main.events");
const probeEvents = join(tmp.dir, "probe.events");
const config = tmp.file(
  "packs.yaml",
  `
name: transparent
upstreams:
  # server-everything samples, elicits, asks for roots and logs during calls: over stdio nothing ties those to
  # the call, so each session gets its own process.
  every:
    command: mcp-server-everything
    isolation: per-session
    max_instances: 64
  roots:
    command: mcp-server-everything
    isolation: per-session
  # One shared server-everything: subscriptions of several sessions share one upstream subscription.
  shared:
    command: mcp-server-everything
    prefix: s_
  # The probes stand for one-user deployments that opted back into in-flight attribution.
  probe:
    command: node
    args: ["${PROBE}", "--events-file", "${probeEvents}"]
    attribution: in-flight
  quiet:
    command: node
    args: ["${PROBE}", "--name", "quiet"]
    attribution: in-flight
  fresh:
    command: node
    args: ["${PROBE}", "--name", "fresh"]
    attribution: in-flight
  conf:
    command: node
    args: ["${CONFORMANCE}"]
    prefix: c_
  main:
    command: node
    args: ["${FIXTURE}", "--notify-grow", "--events-file", "${mainEvents}"]
toolsets:
  picked:
    prompts:
      - conf/test_simple_prompt
      - prompt: conf/test_prompt_with_arguments
        as: greet
    resources:
      - conf/test://static-text
      - conf/test://template/{id}/data
  oneseg:
    resources: ["conf/test://*"]
  deep:
    resources: ["conf/test://**"]
  growing:
    tools: ["main/*"]
  echoonly:
    tools: [main/echo]
  slowonly:
    tools: [main/slow]
`,
);

let served: Served;
const open: (Client | Recorded)[] = [];
const connect = async (query: string, options: RecordedOptions = {}) => {
  const c = await recordedClient(served.url(query), options);
  open.push(c);
  return c;
};
const plain = async (query: string) => {
  const c = await httpClient(served.url(query));
  open.push(c);
  return c;
};
const textOf = (r: unknown) =>
  ((r as { content?: { type: string; text?: string }[] }).content ?? []).map((c) => c.text ?? "").join("\n");
/** The progress token of the first tools/call this client sent. */
const progressTokenOf = (c: Recorded) => {
  const meta = c.sent.find((m) => m.method === "tools/call")?.params?._meta as
    | { progressToken?: unknown }
    | undefined;
  return meta?.progressToken;
};

beforeAll(async () => {
  served = await serve([config]);
});
afterAll(async () => {
  await Promise.all(open.map((c) => c.close().catch(() => {})));
  await served?.stop();
  tmp.cleanup();
});

describe("prompts and resources are selected by toolset, and routed to their upstream", () => {
  test("only the selected toolsets' prompts and resources are listed", async () => {
    const { client } = await connect("only=picked");
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual([
      "c_test_simple_prompt",
      "greet",
    ]);
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(["test://static-text"]);
    expect((await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      "test://template/{id}/data",
    ]);
    expect(await toolNames(client)).toEqual(["list_server_toolsets"]);
  });

  test("a resource glob's * stops at a / and ** crosses it", async () => {
    const one = (await connect("only=oneseg")).client;
    expect((await one.listResources()).resources.map((r) => r.uri).sort()).toEqual([
      "test://static-binary",
      "test://static-text",
      "test://watched-resource",
    ]);
    expect((await one.listResourceTemplates()).resourceTemplates).toEqual([]);
    const deep = (await connect("only=deep")).client;
    expect((await deep.listResources()).resources).toHaveLength(3);
    expect((await deep.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      "test://template/{id}/data",
    ]);
  });

  test("a read of an unselected resource never reaches the upstream, and a template instance does", async () => {
    const { client } = await connect("only=picked");
    const text = await client.readResource({ uri: "test://static-text" });
    expect(text.contents[0]).toMatchObject({ text: "This is the content of the static text resource." });
    const instance = await client.readResource({ uri: "test://template/42/data" });
    expect(JSON.parse(String((instance.contents[0] as { text?: string }).text))).toMatchObject({ id: "42" });
    const err = await client.readResource({ uri: "test://static-binary" }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: -32002 });
  });

  test("a renamed prompt is asked for upstream under its original name", async () => {
    const { client } = await connect("only=picked");
    const got = await client.getPrompt({ name: "greet", arguments: { arg1: "a", arg2: "b" } });
    expect(got.messages[0]!.content).toMatchObject({ text: "Prompt with arguments: arg1='a', arg2='b'" });
    const simple = await client.getPrompt({ name: "c_test_simple_prompt" });
    expect(simple.messages[0]!.content).toMatchObject({ text: "This is a simple prompt for testing." });
    const err = await client
      .getPrompt({ name: "test_prompt_with_arguments", arguments: { arg1: "a", arg2: "b" } })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: -32602 });
  });

  test("completion/complete goes to the right upstream under the original name", async () => {
    const { client } = await connect("only=picked,every");
    const greet = await client.complete({
      ref: { type: "ref/prompt", name: "greet" },
      argument: { name: "arg1", value: "pa" },
    });
    expect(greet.completion.values).toEqual(["paris", "park", "party"]);
    const template = await client.complete({
      ref: { type: "ref/resource", uri: "test://template/{id}/data" },
      argument: { name: "id", value: "1" },
    });
    expect(template.completion.values).toEqual(["1", "123"]);
    const everything = await client.complete({
      ref: { type: "ref/prompt", name: "completable-prompt" },
      argument: { name: "department", value: "Eng" },
    });
    expect(everything.completion.values).toEqual(["Engineering"]);
    const dynamic = await client.complete({
      ref: { type: "ref/resource", uri: "demo://resource/dynamic/text/{resourceId}" },
      argument: { name: "resourceId", value: "7" },
    });
    expect(dynamic.completion.values).toEqual(["7"]);
    const unselected = await client
      .complete({
        ref: { type: "ref/prompt", name: "test_prompt_with_embedded_resource" },
        argument: { name: "resourceUri", value: "t" },
      })
      .catch((e: unknown) => e);
    expect(unselected).toMatchObject({ code: -32602 });
  });

  test("a session advertises only the prompts, resources, logging and completions its upstreams offer", async () => {
    const tools = (await plain("only=growing")).getServerCapabilities();
    expect(tools).toMatchObject({ tools: { listChanged: true } });
    expect(tools?.prompts).toBeUndefined();
    expect(tools?.resources).toBeUndefined();
    expect(tools?.logging).toBeUndefined();
    expect(tools?.completions).toBeUndefined();
    const all = (await plain("only=every")).getServerCapabilities();
    expect(all).toMatchObject({
      tools: {},
      prompts: {},
      resources: { subscribe: true },
      logging: {},
      completions: {},
    });
  });
});

describe("in front of server-everything", () => {
  test("a prompt of server-everything is served through the proxy", async () => {
    const { client } = await connect("only=every");
    const names = (await client.listPrompts()).prompts.map((p) => p.name);
    expect(names).toEqual(expect.arrayContaining(["simple-prompt", "args-prompt", "completable-prompt"]));
    const got = await client.getPrompt({ name: "args-prompt", arguments: { city: "Lyon" } });
    expect(JSON.stringify(got.messages)).toContain("Lyon");
  });

  test("a resource of server-everything is read through the proxy", async () => {
    const { client } = await connect("only=every");
    const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
    expect(templates).toContain("demo://resource/dynamic/text/{resourceId}");
    const read = await client.readResource({ uri: "demo://resource/dynamic/text/3" });
    expect(read.contents[0]).toMatchObject({ uri: "demo://resource/dynamic/text/3" });
    expect(String((read.contents[0] as { text?: string }).text)).toContain("Resource 3");
  });

  test("resources/updated reaches the session that subscribed, and no other", async () => {
    const a = await connect("only=shared");
    const b = await connect("only=shared");
    await Promise.all([a.streamOpen, b.streamOpen]);
    await a.client.subscribeResource({ uri: "demo://resource/dynamic/text/5" });
    await b.client.subscribeResource({ uri: "demo://resource/dynamic/text/6" });
    const updated = (c: Recorded, uri: string) =>
      c.waitFor(
        (m) => m.method === "notifications/resources/updated" && m.params?.uri === uri,
        `resources/updated for ${uri}`,
      );
    // server-everything sends one update per subscribed URI at once, then every 5 s until toggled off.
    await a.client.callTool({ name: "s_toggle-subscriber-updates", arguments: {} });
    try {
      await Promise.all([
        updated(a, "demo://resource/dynamic/text/5"),
        updated(b, "demo://resource/dynamic/text/6"),
      ]);
    } finally {
      await a.client.callTool({ name: "s_toggle-subscriber-updates", arguments: {} });
    }
    const uris = (c: Recorded) => c.notifications("notifications/resources/updated").map((p) => p.uri);
    expect(new Set(uris(a))).toEqual(new Set(["demo://resource/dynamic/text/5"]));
    expect(new Set(uris(b))).toEqual(new Set(["demo://resource/dynamic/text/6"]));
    await a.client.unsubscribeResource({ uri: "demo://resource/dynamic/text/5" });
    await b.client.unsubscribeResource({ uri: "demo://resource/dynamic/text/6" });
  });

  test("an upstream's log message during a call reaches the client that made it", async () => {
    const c = await connect("only=every");
    await c.client.setLoggingLevel("info");
    // server-everything acknowledges a subscription with an info log, sent while the request runs.
    await c.client.subscribeResource({ uri: "demo://resource/dynamic/text/9" });
    const log = await c.waitFor(
      (m) => m.method === "notifications/message" && String(m.params?.data).includes("dynamic/text/9"),
      "the subscription's log message",
    );
    expect(log.params).toMatchObject({ level: "info" });
    await c.client.unsubscribeResource({ uri: "demo://resource/dynamic/text/9" });
  });

  test("sampling/createMessage from the upstream is answered by the client whose call caused it", async () => {
    const asked: unknown[] = [];
    const c = await connect("only=every", {
      capabilities: { sampling: {} },
      setup: (client) =>
        client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
          asked.push(request.params);
          return { role: "assistant", content: { type: "text", text: "sampled by e2e" }, model: "e2e-model" };
        }),
    });
    const r = await c.client.callTool({ name: "trigger-sampling-request", arguments: { prompt: "hi" } });
    expect(r.isError).toBeFalsy();
    expect(textOf(r)).toContain("sampled by e2e");
    expect(textOf(r)).toContain("e2e-model");
    expect(asked).toHaveLength(1);
  });

  test("elicitation/create from the upstream is answered by the client whose call caused it", async () => {
    const c = await connect("only=every", {
      capabilities: { elicitation: { form: {} } },
      setup: (client) =>
        client.setRequestHandler(ElicitRequestSchema, async () => ({
          action: "accept",
          content: { name: "Ada Lovelace" },
        })),
    });
    const r = await c.client.callTool({ name: "trigger-elicitation-request", arguments: {} });
    expect(r.isError).toBeFalsy();
    expect(textOf(r)).toContain("- Name: Ada Lovelace");
  });

  test("a URL-mode elicitation is never sent to a client that declared form mode only", async () => {
    const c = await connect("only=every", {
      capabilities: { elicitation: { form: {} } },
      setup: (client) =>
        client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: {} })),
    });
    const r = await c.client.callTool({
      name: "trigger-url-elicitation",
      arguments: { url: "https://example.com/consent" },
    });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain("no elicitation.url capability");
    expect(c.received.filter((m) => m.method === "elicitation/create")).toEqual([]);
  });

  test("a URL-mode elicitation reaches a client that supports it", async () => {
    const asked: unknown[] = [];
    const c = await connect("only=every", {
      capabilities: { elicitation: { url: {} } },
      setup: (client) =>
        client.setRequestHandler(ElicitRequestSchema, async (request) => {
          asked.push(request.params);
          return { action: "accept" };
        }),
    });
    const r = await c.client.callTool({
      name: "trigger-url-elicitation",
      arguments: { url: "https://example.com/consent", elicitationId: "e2e-1" },
    });
    expect(textOf(r)).toContain("User completed the URL elicitation flow");
    expect(asked).toEqual([expect.objectContaining({ mode: "url", url: "https://example.com/consent" })]);
  });

  test("a URL-elicitation-required error (-32042) keeps its code and its elicitations on the way", async () => {
    const { client } = await connect("only=every", { capabilities: { elicitation: { url: {} } } });
    const err = await client
      .callTool({
        name: "trigger-url-elicitation",
        arguments: { url: "https://example.com/needs-auth", errorPath: true },
      })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: -32042,
      data: {
        elicitations: [expect.objectContaining({ mode: "url", url: "https://modelcontextprotocol.io" })],
      },
    });
  });

  test("an upstream's new resource is announced to the sessions that can see it, and not to others", async () => {
    const a = await connect("only=every");
    const b = await connect("only=picked");
    await Promise.all([a.streamOpen, b.streamOpen]);
    // gzip-file-as-resource registers a session resource; server-everything then sends resources/list_changed.
    await a.client.callTool({
      name: "gzip-file-as-resource",
      arguments: { name: "e2e.txt.gz", data: "data:text/plain;base64,aGVsbG8=" },
    });
    await a.waitFor(
      (m) => m.method === "notifications/resources/list_changed",
      "resources/list_changed on a",
    );
    const uris = (await a.client.listResources()).resources.map((r) => r.uri);
    expect(uris).toContain("demo://resource/session/e2e.txt.gz");
    expect((await b.client.listResources()).resources.map((r) => r.uri)).toEqual(["test://static-text"]);
    await b.client.ping();
    expect(b.notifications("notifications/resources/list_changed")).toEqual([]);
  });

  test("roots/list from the upstream is answered by the client, and asked again after roots/list_changed", async () => {
    let roots = [{ uri: "file:///first", name: "first" }];
    const c = await connect("only=roots", {
      capabilities: { roots: { listChanged: true } },
      setup: (client) => client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots })),
    });
    await c.streamOpen;
    const first = await c.client.callTool({ name: "get-roots-list", arguments: {} });
    expect(textOf(first)).toContain("file:///first");
    roots = [{ uri: "file:///second", name: "second" }];
    const isUpdate = (m: { method?: string; params?: Record<string, unknown> }) =>
      m.method === "notifications/message" && String(m.params?.data).includes("Roots updated");
    const updates = () => c.received.filter(isUpdate).length;
    const before = updates();
    await c.client.sendRootsListChanged();
    // server-everything asks for the roots again when told they changed, then logs that it got them.
    await c.waitFor(
      (m) => isUpdate(m) && updates() > before,
      "a 'Roots updated' log after roots/list_changed",
    );
    const second = await c.client.callTool({ name: "get-roots-list", arguments: {} });
    expect(textOf(second)).toContain("file:///second");
  });

  test("a sampling request for a client without the sampling capability fails clearly, never hangs", async () => {
    const c = await connect("only=every");
    const r = await c.client.callTool(
      { name: "trigger-sampling-request", arguments: { prompt: "hi" } },
      undefined,
      { timeout: 30_000 },
    );
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain("does not support sampling/createMessage (no sampling capability)");
  });

  test("progress of a long-running operation arrives whole, the last notification included", async () => {
    const c = await connect("only=every");
    const r = await c.client.callTool(
      { name: "trigger-long-running-operation", arguments: { duration: 0.5, steps: 5 } },
      undefined,
      { onprogress: () => {} },
    );
    expect(textOf(r)).toContain("Long running operation completed");
    const token = progressTokenOf(c);
    expect(token).toBeDefined();
    const progress = c.notifications("notifications/progress");
    expect(progress.map((p) => p.progress)).toEqual([1, 2, 3, 4, 5]);
    expect(progress.every((p) => p.progressToken === token && p.total === 5)).toBe(true);
  });
});

describe("in front of the fixture server", () => {
  test("two sessions that use the same progress token never get each other's progress", async () => {
    const a = await connect("only=slowonly");
    const b = await connect("only=slowonly");
    const call = (c: Recorded, steps: number) =>
      c.client.callTool({ name: "slow", arguments: { ms: 300, steps, tailMs: 0 } }, undefined, {
        onprogress: () => {},
      });
    await Promise.all([call(a, 3), call(b, 5)]);
    // Two fresh SDK clients pick the same token: only the proxy's own per-hop tokens keep them apart.
    expect(progressTokenOf(a)).toBeDefined();
    expect(progressTokenOf(a)).toBe(progressTokenOf(b));
    const steps = (c: Recorded) =>
      c.notifications("notifications/progress").map((p) => [p.progress, p.total]);
    expect(steps(a)).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
    expect(steps(b)).toEqual([
      [1, 5],
      [2, 5],
      [3, 5],
      [4, 5],
      [5, 5],
    ]);
  });

  test("a cancelled call stops running upstream", async () => {
    const c = await connect("only=slowonly");
    const before = readEvents(mainEvents).filter((e) => e.event === "call" && e.tool === "slow").length;
    const stop = new AbortController();
    const call = c.client
      .callTool({ name: "slow", arguments: { ms: 60_000 } }, undefined, { signal: stop.signal })
      .catch((e: unknown) => e);
    await waitForEvent(
      mainEvents,
      () => readEvents(mainEvents).filter((e) => e.event === "call" && e.tool === "slow").length > before,
      "the slow call upstream",
    );
    stop.abort("the user gave up");
    expect(await call).toBeInstanceOf(Error);
    const cancelled = await waitForEvent(
      mainEvents,
      (e) => e.event === "cancelled",
      "slow's cancelled event",
    );
    expect(Number(cancelled.elapsedMs)).toBeLessThan(60_000);
  });

  test("a tool list change upstream is announced, and only to a session that can see it", async () => {
    const a = await connect("only=growing");
    const b = await connect("only=echoonly");
    await Promise.all([a.streamOpen, b.streamOpen]);
    const before = await toolNames(a.client);
    await a.client.callTool({ name: "grow", arguments: {} });
    await a.waitFor(
      (m) => m.method === "notifications/tools/list_changed",
      "tools/list_changed on session A",
    );
    const after = await toolNames(a.client);
    expect(after.filter((n) => !before.includes(n))).toEqual([expect.stringMatching(/^grown_\d+$/)]);
    // B's selection names main/echo only: its list is recomputed but unchanged, so it hears nothing.
    expect(await toolNames(b.client)).toEqual(["echo", "list_server_toolsets"]);
    await b.client.ping();
    expect(b.notifications("notifications/tools/list_changed")).toEqual([]);
    expect(a.notifications("notifications/tools/list_changed")).toHaveLength(1);
  });

  test("ping is answered through the proxy", async () => {
    const { client } = await connect("only=echoonly");
    expect(await client.ping()).toEqual({});
  });
});

describe("through the probe", () => {
  test("_meta and unknown fields of prompts, resources and their results are kept", async () => {
    const { client } = await connect("only=probe");
    const raw = (method: string, params: Record<string, unknown> = {}) =>
      client.request({ method, params } as never, ResultSchema) as Promise<Record<string, unknown>>;
    const prompts = (await raw("prompts/list")).prompts as Record<string, unknown>[];
    expect(prompts[0]).toMatchObject({ _meta: { "x-prompt-meta": 1 }, "x-vendor": "prompt-tag" });
    const resources = (await raw("resources/list")).resources as Record<string, unknown>[];
    expect(resources[0]).toMatchObject({ _meta: { "x-resource-meta": 2 }, "x-vendor": "resource-tag" });
    const templates = (await raw("resources/templates/list")).resourceTemplates as Record<string, unknown>[];
    expect(templates[0]).toMatchObject({ _meta: { "x-template-meta": 3 }, "x-vendor": "template-tag" });
    expect(await raw("prompts/get", { name: "meta_prompt" })).toMatchObject({
      _meta: { "x-get-meta": 5 },
      "x-extra": "prompt-result-field",
    });
    expect(await raw("resources/read", { uri: "probe://items/1" })).toMatchObject({
      contents: [{ uri: "probe://items/1", _meta: { "x-content-meta": 6 } }],
      _meta: { "x-read-meta": 7 },
      "x-extra": "read-result-field",
    });
    expect(await raw("tools/call", { name: "echo_meta", arguments: {} })).toMatchObject({
      _meta: { "x-result-meta": 4 },
      "x-extra": "result-field",
    });
  });

  test("a client's _meta is kept, and its progress token is not reused upstream", async () => {
    const c = await connect("only=probe");
    const r = await c.client.request(
      {
        method: "tools/call",
        params: {
          name: "echo_meta",
          arguments: {},
          _meta: { progressToken: "client-token", "x-trace": "t1" },
        },
      },
      ResultSchema,
    );
    const upstreamMeta = JSON.parse(textOf(r)) as Record<string, unknown>;
    expect(upstreamMeta["x-trace"]).toBe("t1");
    expect(upstreamMeta.progressToken).toBeDefined();
    expect(upstreamMeta.progressToken).not.toBe("client-token");
  });

  test("logging/setLevel reaches the upstream, and one session's level never silences another's logs", async () => {
    const quiet = await connect("only=probe");
    const loud = await connect("only=probe");
    const levelsSent = () =>
      readEvents(probeEvents)
        .map((e) => e.message as { method?: string; params?: { level?: string } })
        .filter((m) => m.method === "logging/setLevel")
        .map((m) => m.params?.level);
    const sentBefore = levelsSent().length;
    await quiet.client.setLoggingLevel("warning");
    // The upstream is set to the most verbose level any session using it wants (loud never chose: all).
    await waitForEvent(probeEvents, () => levelsSent().length > sentBefore, "logging/setLevel upstream");
    expect(levelsSent().at(-1)).toBe("debug");
    const levels = ["debug", "info", "warning", "error"];
    const logged = async (c: Recorded) => {
      await c.client.callTool({ name: "log", arguments: { levels } });
      await c.waitFor(
        (m) => m.method === "notifications/message" && m.params?.level === "error",
        "the error log",
      );
      return c.notifications("notifications/message").map((p) => p.level);
    };
    expect(await logged(quiet)).toEqual(["warning", "error"]);
    expect(await logged(loud)).toEqual(levels);
  });

  test("a log message while two sessions have calls in flight on a shared upstream reaches neither client, and is counted", async () => {
    const a = await connect("only=probe");
    const b = await connect("only=probe");
    const waits = () =>
      readEvents(probeEvents).filter(
        (e) => (e.message as { params?: { name?: string } }).params?.name === "wait",
      ).length;
    const before = waits();
    const stop = new AbortController();
    const busy = a.client
      .callTool({ name: "wait", arguments: {} }, undefined, { signal: stop.signal })
      .catch((e: unknown) => e);
    const tagged = (c: Recorded, tag: string) =>
      c.notifications("notifications/message").filter((p) => String(p.data).endsWith(` ${tag}`));
    try {
      await waitForEvent(probeEvents, () => waits() > before, "a's wait call upstream");
      await b.client.callTool({ name: "log", arguments: { levels: ["error"], tag: "while-a-waits" } });
    } finally {
      stop.abort();
      await busy;
    }
    // Once b is the only session with a call in flight, its log lines are its own again.
    await b.client.callTool({ name: "log", arguments: { levels: ["error"], tag: "b-alone" } });
    await b.waitFor((m) => String(m.params?.data).endsWith(" b-alone"), "b's own log line");
    await a.client.callTool({ name: "log", arguments: { levels: ["error"], tag: "a-alone" } });
    await a.waitFor((m) => String(m.params?.data).endsWith(" a-alone"), "a's own log line");
    expect(tagged(a, "while-a-waits")).toEqual([]);
    expect(tagged(b, "while-a-waits")).toEqual([]);
    expect(tagged(a, "b-alone")).toEqual([]);
    const metrics = await (await fetch(`${served.base}/metrics`)).text();
    expect(metrics).toMatch(/toolpacks_untied_messages_total\{upstream="probe",kind="log"\} [1-9]/);
  });

  test("with in-flight attribution, a sampling request while two sessions have calls in flight reaches no client", async () => {
    const asked: string[] = [];
    const sampler = (who: string): RecordedOptions => ({
      capabilities: { sampling: {} },
      setup: (client) =>
        client.setRequestHandler(CreateMessageRequestSchema, async () => {
          asked.push(who);
          return { role: "assistant", content: { type: "text", text: `from ${who}` }, model: who };
        }),
    });
    const a = await connect("only=probe", sampler("a"));
    const b = await connect("only=probe", sampler("b"));
    const waits = () =>
      readEvents(probeEvents).filter(
        (e) => (e.message as { params?: { name?: string } }).params?.name === "wait",
      ).length;
    const before = waits();
    const stop = new AbortController();
    const busy = a.client
      .callTool({ name: "wait", arguments: {} }, undefined, { signal: stop.signal })
      .catch((e: unknown) => e);
    try {
      await waitForEvent(probeEvents, () => waits() > before, "a's wait call upstream");
      // The probe does not catch the refusal: its call fails with the proxy's error.
      const err = await b.client
        .callTool({ name: "sample", arguments: { prompt: "whose?" } })
        .catch((e: Error) => e);
      expect(String(err)).toContain("2 client sessions could be meant");
      expect(String(err)).toContain("isolation: per-session");
      expect(asked).toEqual([]);
    } finally {
      stop.abort();
      await busy;
    }
  });

  test("a failed subscription is not remembered: the next one asks the upstream again", async () => {
    // The probe offers resources but no subscriptions: every subscribe must reach it and fail.
    const { client } = await connect("only=probe");
    const first = await client.subscribeResource({ uri: "probe://meta" }).catch((e: unknown) => e);
    expect(first).toMatchObject({ code: -32601 });
    const second = await client.subscribeResource({ uri: "probe://meta" }).catch((e: unknown) => e);
    expect(second).toMatchObject({ code: -32601 });
  });

  test("a session opened after another set a quiet level upstream keeps its logs", async () => {
    const first = await connect("only=quiet");
    await first.client.setLoggingLevel("error");
    const later = await connect("only=quiet");
    await later.client.callTool({ name: "log", arguments: { levels: ["info", "error"] } });
    await later.waitFor(
      (m) => m.method === "notifications/message" && m.params?.level === "error",
      "the error log",
    );
    expect(later.notifications("notifications/message").map((p) => p.level)).toEqual(["info", "error"]);
  });

  test("an upstream's cancellation of its sampling request reaches the client", async () => {
    // Not the upstream's first server→client request: the next test is about that one.
    await cancelledSampling("only=probe", true);
  });

  // id 0 is an upstream's first server→client request; the SDK 1.x Client ignored notifications/cancelled for
  // it (typescript-sdk issue 2283: `if (!params.requestId) return`). src/upstream/rpc-client.ts, which replaced
  // it, aborts by id, 0 included.
  test("the cancellation of an upstream's first server→client request (id 0) reaches the client", async () => {
    await cancelledSampling("only=fresh", false);
  });

  test("the upstream is initialized with the latest protocol version toolpacks speaks", async () => {
    const c = await connect("only=probe");
    expect(await toolNames(c.client)).toContain("echo_meta");
    const init = readEvents(probeEvents)
      .map((e) => e.message as { method?: string; params?: { protocolVersion?: string } })
      .find((m) => m.method === "initialize");
    expect(init?.params?.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
  });
});

/** A sampling request the probe cancels itself (after answering one first, if asked): the client must see it. */
async function cancelledSampling(query: string, answerOneFirst: boolean): Promise<void> {
  let cancelled!: () => void;
  const seen = new Promise<void>((ok) => {
    cancelled = ok;
  });
  let asked!: () => void;
  const arrived = new Promise<void>((ok) => {
    asked = ok;
  });
  let answer = answerOneFirst;
  const c = await connect(query, {
    capabilities: { sampling: {} },
    setup: (client) =>
      client.setRequestHandler(CreateMessageRequestSchema, (_request, extra) => {
        if (answer) {
          answer = false;
          return Promise.resolve({ role: "assistant", content: { type: "text", text: "first" }, model: "m" });
        }
        return new Promise((_ok, fail) => {
          asked();
          extra.signal.addEventListener("abort", () => {
            cancelled();
            fail(new Error("cancelled"));
          });
        });
      }),
  });
  if (answerOneFirst) {
    expect(textOf(await c.client.callTool({ name: "sample", arguments: { prompt: "x" } }))).toContain(
      "first",
    );
  }
  const call = c.client.callTool({ name: "sample_until_cancelled", arguments: {} });
  await arrived;
  await c.client.callTool({ name: "cancel_sampling", arguments: {} });
  expect(textOf(await call)).toBe("cancelled");
  await c.waitFor(
    (m) => m.method === "notifications/cancelled",
    "notifications/cancelled from the proxy",
    5_000,
  );
  await seen;
}

/** One raw JSON-RPC request over HTTP; the answer may come as JSON or as an SSE stream. */
async function rpc(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const json = (res.headers.get("content-type") ?? "").includes("text/event-stream")
    ? text
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => JSON.parse(l.slice(5)) as Record<string, unknown>)
        .find((m) => "id" in m)
    : text
      ? (JSON.parse(text) as Record<string, unknown>)
      : undefined;
  return { status: res.status, session: res.headers.get("mcp-session-id"), json };
}

describe("protocol versions are negotiated per hop", () => {
  test.each([...SUPPORTED_PROTOCOL_VERSIONS])(
    "a client speaking %s is served in its own version",
    async (version) => {
      const url = served.url("only=echoonly");
      const init = await rpc(url, {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "raw", version: "1.0.0" } },
      });
      expect(init.status).toBe(200);
      expect(init.json).toMatchObject({ result: { protocolVersion: version } });
      const headers = { "mcp-session-id": init.session!, "mcp-protocol-version": version };
      expect((await rpc(url, { jsonrpc: "2.0", method: "notifications/initialized" }, headers)).status).toBe(
        202,
      );
      const list = await rpc(url, { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }, headers);
      expect(list.json).toMatchObject({
        result: { tools: [{ name: "echo" }, { name: "list_server_toolsets" }] },
      });
      const call = await rpc(
        url,
        {
          jsonrpc: "2.0",
          id: 3,
          method: "tools/call",
          params: { name: "echo", arguments: { text: version } },
        },
        headers,
      );
      expect(call.json).toMatchObject({ result: { content: [{ type: "text", text: version }] } });
      await fetch(url, { method: "DELETE", headers });
    },
  );
});
