/** find_tools and call_tool inside a real session: a call through call_tool is the direct call, in every respect. */
import { describe, expect, test } from "vitest";
import { requestDigest } from "../../src/modern/request-state.js";
import type { Params } from "../../src/proxy/host.js";
import { MAX_SEARCH_INDEXES, SearchIndexes } from "../../src/proxy/search-indexes.js";
import { buildIndexAsync } from "../../src/search/build.js";
import { catalogOf } from "../helpers/catalog.js";
import { FakeHost, rawClient, type Script, sdkClient } from "../helpers/session-host.js";

const CATALOG = `
upstreams:
  gh: { command: gh-server }
  mem: { command: mem-server, isolation: per-session }
toolsets:
  issues:
    title: GitHub issues
    deferred: true
    capture: { over_bytes: 100 }
    tools: [gh/*]
  notes:
    tools: [mem/*]
`;
const OFFERS = {
  gh: {
    tools: [
      {
        name: "list_issues",
        description: "List the issues of a repository.",
        inputSchema: { type: "object" },
      },
      {
        name: "create_issue",
        description: "Open a new issue in a repository.",
        inputSchema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] },
      },
      {
        name: "comment",
        description: "Add a comment to an issue.",
        inputSchema: { type: "object", properties: { body: { type: "string" } } },
      },
    ],
  },
  mem: {
    tools: [{ name: "remember", description: "Store a fact.", inputSchema: { type: "object" } }],
  },
};

function setup(query = "") {
  const host = new FakeHost(catalogOf(CATALOG));
  return { host, session: host.open(query, OFFERS) };
}

/** Sends one request and returns its answer. */
async function ask(session: ReturnType<typeof setup>["session"], method: string, params: Params) {
  const raw = await rawClient(session);
  await raw.send({ id: 7, method, params });
  return { ...(await raw.answer(7)), raw };
}

describe("find_tools", () => {
  test("ranks the deferred tools and returns what a model needs to call one", async () => {
    const { session, host } = setup();
    const client = await sdkClient(session);
    const r = await client.callTool({
      name: "find_tools",
      arguments: { query: "open a new issue", limit: 2 },
    });
    const found = r.structuredContent as {
      tools: { name: string; inputSchema: unknown; toolset: string }[];
      total: number;
    };
    expect(found.tools[0]).toMatchObject({
      name: "create_issue",
      toolset: "issues",
      inputSchema: OFFERS.gh.tools[1]!.inputSchema,
    });
    expect(found.tools).toHaveLength(2);
    expect(JSON.parse((r.content as { text: string }[])[0]!.text)).toEqual(found);
    expect(host.seen).toEqual([]);
  });

  test("a toolset that is not deferred in the session is refused, naming those that are", async () => {
    const { session } = setup();
    const a = await ask(session, "tools/call", {
      name: "find_tools",
      arguments: { query: "x", toolset: "notes" },
    });
    expect(a.error?.code).toBe(-32602);
    expect(a.error?.message).toContain("(deferred: issues)");
  });

  test("a query past 1,024 characters is -32602 naming the bound, and nothing is searched", async () => {
    const { session } = setup();
    const a = await ask(session, "tools/call", {
      name: "find_tools",
      arguments: { query: "aB ".repeat(400_000) },
    });
    expect(a.error?.code).toBe(-32602);
    expect(a.error?.message).toContain("at most 1024 characters");
  });

  test("searching never changes the tool list", async () => {
    const { session } = setup();
    const raw = await rawClient(session);
    await raw.send({ id: 1, method: "tools/list" });
    const before = (await raw.answer(1)).result;
    await raw.send({
      id: 2,
      method: "tools/call",
      params: { name: "find_tools", arguments: { query: "issue" } },
    });
    await raw.answer(2);
    await raw.send({ id: 3, method: "tools/list" });
    expect((await raw.answer(3)).result).toEqual(before);
    expect(raw.received.filter((m) => "method" in m)).toEqual([]);
    expect((before as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual([
      "remember",
      "find_tools",
      "call_tool",
      "list_server_toolsets",
      "inspect_state",
    ]);
  });
});

/** Twelve deferred toolsets of two tools each: `without=` two of them is one of 66 distinct deferred sets. */
const GROUPS = Array.from({ length: 12 }, (_, g) => `g${g}`);
const MANY = `
upstreams:
  u: { command: u-server }
toolsets:
${GROUPS.map((g) => `  ${g}:\n    deferred: true\n    tools: [u/${g}_*]`).join("\n")}
`;
const MANY_OFFERS = {
  u: {
    tools: GROUPS.flatMap((g) =>
      ["create", "delete"].map((verb) => ({
        name: `${g}_${verb}`,
        description: `${verb} a thing of ${g}.`,
        inputSchema: { type: "object" },
      })),
    ),
  },
};

/** A host serving MANY whose index builds are counted (the number of entries each was asked to index). */
function manyHost() {
  const host = new FakeHost(catalogOf(MANY));
  const builds: number[] = [];
  host.searchIndexes = new SearchIndexes({
    build: (entries) => {
      builds.push(entries.length);
      return buildIndexAsync(entries);
    },
  });
  return { host, builds };
}

describe("find_tools indexes across sessions (SPEC §7.6)", () => {
  test("sessions past the index bound, each deferring other tools, never leave more indexes than the bound; each finds only its own tools", async () => {
    const { host, builds } = manyHost();
    const selections = GROUPS.flatMap((a, i) => GROUPS.slice(i + 1).map((b) => [a, b] as const)).slice(0, 30);
    for (const [i, [a, b]] of selections.entries()) {
      const session = host.open(`without=${a},${b}`, MANY_OFFERS, `s${i}`);
      const client = await sdkClient(session);
      const r = await client.callTool({ name: "find_tools", arguments: { query: "", limit: 20 } });
      const found = (r.structuredContent as { tools: { name: string; toolset: string }[]; total: number })
        .tools;
      const mine = GROUPS.filter((g) => g !== a && g !== b);
      expect(found.map((t) => t.name).sort()).toEqual(
        mine.flatMap((g) => [`${g}_create`, `${g}_delete`]).sort(),
      );
      expect(found.every((t) => mine.includes(t.toolset))).toBe(true);
      expect(host.searchIndexes.size).toBeLessThanOrEqual(MAX_SEARCH_INDEXES);
      await client.close();
      await session.close();
      host.sessions.delete(session);
    }
    expect(builds).toHaveLength(30);
    expect(host.searchIndexes.size).toBe(MAX_SEARCH_INDEXES);
    expect(host.searchIndexes.tools).toBe(MAX_SEARCH_INDEXES * 20);
  });

  test("sessions with the same deferred tools share one index, each on its own resolution", async () => {
    const { host, builds } = manyHost();
    const sessions = [0, 1, 2].map((i) => host.open("without=g0", MANY_OFFERS, `s${i}`));
    expect(sessions[1]!.resolution).not.toBe(sessions[0]!.resolution);
    for (const session of sessions) {
      const client = await sdkClient(session);
      await client.callTool({ name: "find_tools", arguments: { query: "create" } });
    }
    expect(builds).toEqual([22]);
  });
});

describe("call_tool is the direct call", () => {
  test("the upstream receives exactly what a direct call sends, and the client the same result", async () => {
    const direct = setup();
    const through = setup();
    direct.host.script = through.host.script = () => ({
      content: [{ type: "text", text: "done" }],
      isError: false,
    });
    const d = await ask(direct.session, "tools/call", { name: "create_issue", arguments: { title: "t" } });
    const c = await ask(through.session, "tools/call", {
      name: "call_tool",
      arguments: { name: "create_issue", arguments: { title: "t" } },
    });
    expect(c.result).toEqual(d.result);
    const strip = (seen: typeof direct.host.seen) =>
      seen.map(({ instance, method, params }) => ({ instance, method, params }));
    expect(strip(through.host.seen)).toEqual(strip(direct.host.seen));
    expect(through.host.calls).toEqual(direct.host.calls);
    expect(through.host.calls).toEqual([{ tool: "create_issue", outcome: "ok" }]);
  });

  test("arguments that do not fit the schema get the same -32602, and reach no upstream", async () => {
    const direct = setup();
    const through = setup();
    const d = await ask(direct.session, "tools/call", { name: "create_issue", arguments: { title: 5 } });
    const c = await ask(through.session, "tools/call", {
      name: "call_tool",
      arguments: { name: "create_issue", arguments: { title: 5 } },
    });
    expect(d.error?.code).toBe(-32602);
    expect(c.error).toEqual(d.error);
    expect(through.host.seen).toEqual([]);
  });

  test("a large result is captured as a handle, and the handle works as an argument through call_tool", async () => {
    const { session, host } = setup();
    const big = "x".repeat(500);
    host.script = (_m, p) =>
      p.name === "list_issues"
        ? { content: [{ type: "text", text: big }] }
        : { content: [{ type: "text", text: "ok" }] };
    const client = await sdkClient(session);
    const listed = await client.callTool({ name: "call_tool", arguments: { name: "list_issues" } });
    const meta = listed._meta as { "toolpacks/handle": { handle: string; bytes: number } };
    expect(meta["toolpacks/handle"]).toEqual({ handle: "@state:issues/list_issues/1", bytes: 500 });
    await client.callTool({
      name: "call_tool",
      arguments: { name: "comment", arguments: { body: "@state:issues/list_issues/1" } },
    });
    const sent = host.seen.filter((s) => s.method === "tools/call").at(-1)!;
    expect(sent.params).toMatchObject({ name: "comment", arguments: { body: big } });
  });

  test("a per-session upstream's tool goes to the session's own instance through call_tool", async () => {
    const host = new FakeHost(catalogOf(CATALOG));
    const a = host.open("defer=notes", OFFERS, "alice");
    const b = host.open("defer=notes", OFFERS, "bob");
    for (const s of [a, b]) {
      const client = await sdkClient(s);
      await client.callTool({ name: "call_tool", arguments: { name: "remember" } });
    }
    const instances = host.seen.filter((s) => s.method === "tools/call").map((s) => s.instance.id);
    expect(instances).toEqual([a.ref("mem").id, b.ref("mem").id]);
    expect(new Set(instances).size).toBe(2);
  });

  test("the client's progress token follows the call through call_tool", async () => {
    const { session, host } = setup();
    host.script = (_m, _p, options) => {
      options.onProgress?.({ progress: 1, total: 2 });
      return { content: [] };
    };
    const a = await ask(session, "tools/call", {
      name: "call_tool",
      arguments: { name: "list_issues" },
      _meta: { progressToken: "p1" },
    });
    expect(a.error).toBeUndefined();
    expect(a.raw.received).toContainEqual(
      expect.objectContaining({
        method: "notifications/progress",
        params: { progress: 1, total: 2, progressToken: "p1" },
      }),
    );
  });

  test("a directly listed tool may be called through call_tool", async () => {
    const { session, host } = setup();
    const a = await ask(session, "tools/call", { name: "call_tool", arguments: { name: "remember" } });
    expect(a.error).toBeUndefined();
    expect(host.seen.map((s) => [s.instance.upstream, s.params.name])).toEqual([["mem", "remember"]]);
  });

  test.each([
    ["a name the session does not serve", { name: "delete_repo" }, "Unknown tool: delete_repo"],
    [
      "call_tool itself",
      { name: "call_tool", arguments: { name: "list_issues" } },
      "Unknown tool: call_tool",
    ],
  ])("%s is -32602 naming it and suggesting find_tools", async (_what, args, message) => {
    const { session, host } = setup();
    const a = await ask(session, "tools/call", { name: "call_tool", arguments: args });
    expect(a.error?.code).toBe(-32602);
    expect(a.error?.message).toContain(message);
    expect(a.error?.message).toContain("find_tools");
    expect(host.seen).toEqual([]);
  });

  test("call_tool's own arguments are checked", async () => {
    const { session } = setup();
    const a = await ask(session, "tools/call", { name: "call_tool", arguments: { tool: "list_issues" } });
    expect(a.error?.code).toBe(-32602);
    expect(a.error?.message).toContain('call_tool has no argument "tool"');
  });
});

describe("without a deferred toolset", () => {
  test("find_tools and call_tool are neither listed nor callable", async () => {
    const host = new FakeHost(catalogOf(CATALOG.replace("deferred: true", "deferred: false")));
    const session = host.open("", OFFERS);
    const client = await sdkClient(session);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).not.toContain("find_tools");
    expect(names).not.toContain("call_tool");
    const a = await ask(session, "tools/call", { name: "find_tools", arguments: { query: "x" } });
    expect(a.error).toMatchObject({ code: -32602, message: "Unknown tool: find_tools" });
  });
});

describe("a 2026-07-28 client", () => {
  const envelope = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
  };
  /** The 2025 upstream asks which repository before it answers (bridged as input_required rounds, B3). */
  const asksFirst: Script = async (_m, params, options) => {
    const answer = await options.onServerRequest!(
      { method: "elicitation/create", params: { message: "Which repository?", requestedSchema: {} } },
      new AbortController().signal,
    );
    return { content: [{ type: "text", text: `${String(params.name)}: ${JSON.stringify(answer)}` }] };
  };

  test("lists find_tools and call_tool and finds a deferred tool", async () => {
    const { session } = setup();
    const raw = await rawClient(session);
    await raw.send({ id: 1, method: "tools/list", params: { _meta: envelope } });
    await raw.send({
      id: 2,
      method: "tools/call",
      params: { name: "find_tools", arguments: { query: "open a new issue", limit: 1 }, _meta: envelope },
    });
    const list = (await raw.answer(1)).result as { tools: { name: string }[]; resultType: string };
    expect(list.tools.map((t) => t.name)).toEqual([
      "remember",
      "find_tools",
      "call_tool",
      "list_server_toolsets",
      "inspect_state",
    ]);
    const found = await raw.answer(2);
    expect(found.result).toMatchObject({
      resultType: "complete",
      structuredContent: { tools: [{ name: "create_issue", toolset: "issues" }] },
    });
  });

  test("call_tool of a tool whose upstream asks for input takes the same input_required rounds as a direct call", async () => {
    const direct = setup();
    const through = setup();
    direct.host.script = through.host.script = asksFirst;
    const args = { title: "t" };
    const d = await rawClient(direct.session);
    const c = await rawClient(through.session);
    await d.send({
      id: 1,
      method: "tools/call",
      params: { name: "create_issue", arguments: args, _meta: envelope },
    });
    const viaCallTool = { name: "call_tool", arguments: { name: "create_issue", arguments: args } };
    await c.send({ id: 1, method: "tools/call", params: { ...viaCallTool, _meta: envelope } });
    const [round1d, round1c] = [(await d.answer(1)).result!, (await c.answer(1)).result!];
    expect(round1c).toMatchObject({ resultType: "input_required" });
    expect(round1c.inputRequests).toEqual(round1d.inputRequests);
    // Its requestState is bound to the request the client sent and retries (what the HTTP endpoint checks
    // before it finds the parked call), not to the call of the named tool.
    const opens = (params: Params) =>
      through.host.requestStates.open(String(round1c.requestState), {
        owner: through.session.owner,
        request: requestDigest("tools/call", params),
      }).ok;
    expect(opens(viaCallTool)).toBe(true);
    expect(opens({ name: "create_issue", arguments: args })).toBe(false);
    expect(round1c.inputRequests).toEqual({
      r1: { method: "elicitation/create", params: { message: "Which repository?", requestedSchema: {} } },
    });
    // The retry of call_tool answers the parked upstream call, as a direct retry does.
    const inputResponses = { r1: { action: "accept", content: { repo: "a/b" } } };
    await d.send({
      id: 2,
      method: "tools/call",
      params: {
        name: "create_issue",
        arguments: args,
        inputResponses,
        requestState: round1d.requestState,
        _meta: envelope,
      },
    });
    await c.send({
      id: 2,
      method: "tools/call",
      params: { ...viaCallTool, inputResponses, requestState: round1c.requestState, _meta: envelope },
    });
    const [done, doneDirect] = [(await c.answer(2)).result!, (await d.answer(2)).result!];
    expect(done).toMatchObject({ resultType: "complete" });
    expect(done.content).toEqual(doneDirect.content);
    expect(done.content).toEqual([
      { type: "text", text: 'create_issue: {"action":"accept","content":{"repo":"a/b"}}' },
    ]);
    const calls = (h: FakeHost) => h.seen.filter((x) => x.method === "tools/call").map((x) => x.params.name);
    expect(calls(through.host)).toEqual(["create_issue"]);
    expect(through.host.calls).toEqual(direct.host.calls);
  });

  test("a call_tool retry whose requestState is not its own is refused and leaves the parked call alone", async () => {
    const { host, session } = setup();
    host.script = asksFirst;
    const c = await rawClient(session);
    const viaCallTool = { name: "call_tool", arguments: { name: "create_issue", arguments: { title: "t" } } };
    await c.send({ id: 1, method: "tools/call", params: { ...viaCallTool, _meta: envelope } });
    const round1 = (await c.answer(1)).result!;
    const other = { name: "call_tool", arguments: { name: "create_issue", arguments: { title: "other" } } };
    await c.send({
      id: 2,
      method: "tools/call",
      params: {
        ...other,
        inputResponses: { r1: { action: "decline" } },
        requestState: round1.requestState,
        _meta: envelope,
      },
    });
    expect((await c.answer(2)).error).toMatchObject({
      code: -32602,
      message: "Invalid or expired requestState",
    });
    await c.send({
      id: 3,
      method: "tools/call",
      params: {
        ...viaCallTool,
        inputResponses: { r1: { action: "decline" } },
        requestState: round1.requestState,
        _meta: envelope,
      },
    });
    expect((await c.answer(3)).result).toMatchObject({ resultType: "complete" });
  });
});
