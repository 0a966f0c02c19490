/** The session in process: method → route → effect, cancellation, ties and isolation, without a child process. */
import {
  CreateMessageRequestSchema,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, test } from "vitest";
import { catalogOf } from "../helpers/catalog.js";
import { FakeHost, rawClient, sdkClient } from "../helpers/session-host.js";

const CATALOG = `
upstreams:
  gh: { command: gh-server, prefix: gh_ }
  mem: { command: mem-server, isolation: per-session }
toolsets:
  issues:
    tools: [gh/list_issues, { tool: gh/create_issue, as: open_issue }]
    prompts: [{ prompt: gh/triage, as: triage_now }]
    resources: ["gh/repo://{name}/readme"]
  notes:
    tools: [mem/*]
`;
const OFFERS = {
  gh: {
    tools: [
      { name: "list_issues", inputSchema: { type: "object" } },
      {
        name: "create_issue",
        inputSchema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] },
      },
    ],
    prompts: [{ name: "triage" }],
    templates: [{ uriTemplate: "repo://{name}/readme", name: "readme" }],
  },
  mem: { tools: [{ name: "remember", inputSchema: { type: "object" } }] },
};

function setup() {
  const host = new FakeHost(catalogOf(CATALOG));
  return { host, session: host.open("", OFFERS) };
}

describe("a session answers each method by its route", () => {
  const cases: {
    what: string;
    request: { method: string; params?: Record<string, unknown> };
    upstream?: { instance: string; method: string; params: Record<string, unknown> };
    error?: number;
  }[] = [
    {
      what: "a renamed tool is called upstream under its own name",
      request: { method: "tools/call", params: { name: "open_issue", arguments: { title: "x" } } },
      upstream: {
        instance: "gh",
        method: "tools/call",
        params: { name: "create_issue", arguments: { title: "x" } },
      },
    },
    {
      what: "a prefixed tool is called upstream without the prefix",
      request: { method: "tools/call", params: { name: "gh_list_issues", arguments: {} } },
      upstream: { instance: "gh", method: "tools/call", params: { name: "list_issues" } },
    },
    {
      what: "a renamed prompt is asked for under its own name",
      request: { method: "prompts/get", params: { name: "triage_now" } },
      upstream: { instance: "gh", method: "prompts/get", params: { name: "triage" } },
    },
    {
      what: "a template instance is read from its upstream",
      request: { method: "resources/read", params: { uri: "repo://toolpacks/readme" } },
      upstream: { instance: "gh", method: "resources/read", params: { uri: "repo://toolpacks/readme" } },
    },
    {
      what: "a completion of a renamed prompt goes upstream under its own name",
      request: {
        method: "completion/complete",
        params: { ref: { type: "ref/prompt", name: "triage_now" }, argument: { name: "a", value: "" } },
      },
      upstream: {
        instance: "gh",
        method: "completion/complete",
        params: { ref: { type: "ref/prompt", name: "triage" } },
      },
    },
    {
      what: "a per-session upstream's tool goes to the session's own instance",
      request: { method: "tools/call", params: { name: "remember", arguments: {} } },
      upstream: { instance: "mem", method: "tools/call", params: { name: "remember" } },
    },
    {
      what: "an unknown tool is refused by name",
      request: { method: "tools/call", params: { name: "nope" } },
      error: -32602,
    },
    {
      what: "arguments that do not fit the schema are refused before the upstream",
      request: { method: "tools/call", params: { name: "open_issue", arguments: {} } },
      error: -32602,
    },
    {
      what: "an unlisted resource is not found",
      request: { method: "resources/read", params: { uri: "file:///etc/passwd" } },
      error: -32002,
    },
    {
      what: "an unknown prompt is refused",
      request: { method: "prompts/get", params: { name: "triage" } },
      error: -32602,
    },
    { what: "an unknown method is not found", request: { method: "tasks/list" }, error: -32601 },
  ];
  for (const c of cases) {
    test(c.what, async () => {
      const { host, session } = setup();
      const raw = await rawClient(session);
      await raw.send({ id: 1, ...c.request });
      const answer = await raw.answer(1);
      if (c.error !== undefined) {
        expect(answer.error?.code).toBe(c.error);
        expect(host.seen.filter((s) => s.method === c.request.method)).toEqual([]);
        return;
      }
      expect(answer.error).toBeUndefined();
      const seen = host.seen.find((s) => s.method === c.upstream!.method);
      expect(seen?.instance.upstream).toBe(c.upstream!.instance);
      expect(seen?.params).toMatchObject(c.upstream!.params);
    });
  }

  test("tools/list is the resolution's list plus list_server_toolsets, in a stable order", async () => {
    const { session } = setup();
    const client = await sdkClient(session);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(["gh_list_issues", "open_issue", "remember", "list_server_toolsets"]);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(names);
  });

  test("ping is answered by the session itself", async () => {
    const { host, session } = setup();
    const client = await sdkClient(session);
    await client.ping();
    expect(host.seen).toEqual([]);
  });
});

describe("cancellation", () => {
  test("a cancelled request of id 0 aborts its upstream call and gets no answer", async () => {
    const { host, session } = setup();
    let aborted = false;
    host.script = (_m, _p, options) =>
      new Promise((_ok, fail) =>
        options.signal?.addEventListener("abort", () => {
          aborted = true;
          fail(new Error("aborted"));
        }),
      );
    const raw = await rawClient(session);
    await raw.send({ id: 0, method: "tools/call", params: { name: "gh_list_issues", arguments: {} } });
    while (!host.seen.length) await new Promise((r) => setImmediate(r));
    await raw.send({
      method: "notifications/cancelled",
      params: { requestId: 0, reason: "changed my mind" },
    });
    while (!aborted) await new Promise((r) => setImmediate(r));
    while (!host.calls.length) await new Promise((r) => setImmediate(r));
    await raw.send({ id: 1, method: "ping" });
    await raw.answer(1);
    expect(raw.received.filter((m) => (m as { id?: unknown }).id === 0)).toEqual([]);
    expect(host.calls).toEqual([{ tool: "gh_list_issues", outcome: "cancelled" }]);
  });
});

describe("what an upstream sends during a call reaches only the client that made it", () => {
  test("a log line tied to a call reaches its client, filtered by the client's level", async () => {
    const { host, session } = setup();
    host.script = (_m, _p, options) => {
      options.onNotification?.({
        method: "notifications/message",
        params: { level: "debug", data: "noise" },
      });
      options.onNotification?.({ method: "notifications/message", params: { level: "error", data: "tied" } });
      return { content: [] };
    };
    const client = await sdkClient(session);
    const logs: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params.data));
    await client.setLoggingLevel("warning");
    await client.callTool({ name: "gh_list_issues", arguments: {} });
    expect(logs).toEqual(["tied"]);
  });

  test("a sampling request tied to a call is asked of that call's client", async () => {
    const { host, session } = setup();
    host.script = async (_m, _p, options) => {
      const answer = await options.onServerRequest!(
        { method: "sampling/createMessage", params: { messages: [], maxTokens: 5 } },
        new AbortController().signal,
      );
      return { content: [{ type: "text", text: JSON.stringify(answer) }] };
    };
    const client = await sdkClient(session, { sampling: {} });
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({
      role: "assistant",
      content: { type: "text", text: "sampled" },
      model: "m",
    }));
    const r = await client.callTool({ name: "gh_list_issues", arguments: {} });
    expect(JSON.stringify(r.content)).toContain("sampled");
  });

  test("an untied log line of a shared instance reaches no session, and is counted", async () => {
    const { host } = setup();
    const a = host.open("", OFFERS, "a");
    const b = host.open("", OFFERS, "b");
    const logs: string[] = [];
    for (const [name, s] of [
      ["a", a],
      ["b", b],
    ] as const) {
      const client = await sdkClient(s);
      client.setNotificationHandler(LoggingMessageNotificationSchema, () => void logs.push(name));
    }
    host.traffic.notification(a.ref("gh"), {
      method: "notifications/message",
      params: { level: "error", data: "x" },
    });
    await new Promise((r) => setImmediate(r));
    expect(logs).toEqual([]);
    expect(host.untied).toEqual([{ upstream: "gh", kind: "log" }]);
  });

  test("an untied sampling request of a shared instance is refused, naming isolation: per-session", async () => {
    const { host, session } = setup();
    await sdkClient(session, { sampling: {} });
    const err = await host.traffic
      .serverRequest(session.ref("gh"), { method: "sampling/createMessage" }, new AbortController().signal)
      .catch((e: Error) => e);
    expect((err as Error).message).toContain("isolation: per-session");
    expect(host.untied).toEqual([{ upstream: "gh", kind: "request" }]);
  });

  test("a per-session instance's untied log line reaches its one session", async () => {
    const { host } = setup();
    const a = host.open("", OFFERS, "a");
    const b = host.open("", OFFERS, "b");
    const got: string[] = [];
    for (const [name, s] of [
      ["a", a],
      ["b", b],
    ] as const) {
      const client = await sdkClient(s);
      client.setNotificationHandler(LoggingMessageNotificationSchema, () => void got.push(name));
    }
    host.traffic.notification(b.ref("mem"), {
      method: "notifications/message",
      params: { level: "info", data: "x" },
    });
    await new Promise((r) => setImmediate(r));
    expect(got).toEqual(["b"]);
    expect(host.untied).toEqual([]);
  });
});

describe("a 2026-07-28 request on the same session transport", () => {
  const envelope = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
  };

  test("server/discover is answered before any initialize, naming the selection's capabilities", async () => {
    const { session } = setup();
    const raw = await rawClient(session);
    await raw.send({ id: 1, method: "server/discover", params: { _meta: envelope } });
    const answer = await raw.answer(1);
    expect(answer.result).toMatchObject({
      resultType: "complete",
      supportedVersions: ["2026-07-28"],
      capabilities: { tools: { listChanged: true } },
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "fake" } },
    });
  });

  test("a list carries resultType and cache hints; a call carries resultType and no hints", async () => {
    const { session } = setup();
    const raw = await rawClient(session);
    await raw.send({ id: 1, method: "tools/list", params: { _meta: envelope } });
    await raw.send({
      id: 2,
      method: "tools/call",
      params: { name: "gh_list_issues", arguments: {}, _meta: envelope },
    });
    const [list, call] = [await raw.answer(1), await raw.answer(2)];
    expect(list.result).toMatchObject({ resultType: "complete", ttlMs: 60_000 });
    expect(call.result).toMatchObject({ resultType: "complete" });
    expect(call.result).not.toHaveProperty("ttlMs");
  });

  test("a malformed envelope is -32602, and a removed method is -32601", async () => {
    const { session } = setup();
    const raw = await rawClient(session);
    await raw.send({
      id: 1,
      method: "tools/list",
      params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } },
    });
    await raw.send({ id: 2, method: "ping", params: { _meta: envelope } });
    expect((await raw.answer(1)).error?.code).toBe(-32602);
    expect((await raw.answer(2)).error?.code).toBe(-32601);
  });
});
