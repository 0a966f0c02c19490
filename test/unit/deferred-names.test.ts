/**
 * Upstream tools named like the built-in tools (find_tools, call_tool, list_server_toolsets), in a real session:
 * a deferred one never takes the built-in's name in tools/list or in a call, and is reached through call_tool; a
 * listed one wins the name, and what is left says so (SPEC §13.1).
 */
import { describe, expect, test } from "vitest";
import type { Params } from "../../src/proxy/host.js";
import { callToolDef, callToolDefBeside, findToolsDef, findToolsDefBeside } from "../../src/search/tools.js";
import { catalogOf } from "../helpers/catalog.js";
import { FakeHost, rawClient } from "../helpers/session-host.js";

const CATALOG = `
upstreams:
  up: { command: up-server }
  main: { command: main-server }
toolsets:
  core:
    tools: [main/echo]
  phone:
    deferred: true
    tools: [up/call_tool, up/find_tools, up/list_server_toolsets, up/dial]
  dial:
    default: false
    tools: [up/call_tool]
  shop:
    default: false
    tools: [up/find_tools]
`;
const tool = (name: string, description: string) => ({
  name,
  description,
  inputSchema: { type: "object", properties: { number: { type: "string" } } },
});
const OFFERS = {
  up: {
    tools: [
      tool("call_tool", "Places a phone call."),
      tool("find_tools", "Finds hardware tools in a shop."),
      tool("list_server_toolsets", "Lists the phone's servers."),
      tool("dial", "Dials a number."),
    ],
  },
  main: { tools: [tool("echo", "Echoes its text.")] },
};

function setup(query = "") {
  const host = new FakeHost(catalogOf(CATALOG));
  host.script = (_method, params) => ({
    content: [{ type: "text", text: `upstream ${String(params.name)}` }],
  });
  return { host, session: host.open(query, OFFERS) };
}

async function client(query = "") {
  const { host, session } = setup(query);
  // The index is built at the first search, in chunks: built before, a search is answered at once.
  await host.searchIndexes.of(session.resolution);
  const raw = await rawClient(session);
  let id = 0;
  const ask = async (method: string, params: Params = {}) => {
    await raw.send({ id: ++id, method, params });
    return raw.answer(id);
  };
  const listed = async () => ((await ask("tools/list")).result as { tools: Params[] }).tools;
  /** What reached the upstreams: each tools/call's name and arguments. */
  const relayed = () =>
    host.seen.filter((s) => s.method === "tools/call").map((s) => [s.params.name, s.params.arguments]);
  return { ask, listed, relayed };
}

describe("a deferred upstream tool of a built-in's name", () => {
  test("a deferred upstream tool named call_tool never takes the built-in's place", async () => {
    const c = await client();
    const tools = await c.listed();
    expect(tools.map((t) => t.name)).toEqual(["echo", "find_tools", "call_tool", "list_server_toolsets"]);
    expect(tools.find((t) => t.name === "call_tool")).toEqual(callToolDef);
    expect(tools.find((t) => t.name === "find_tools")).toEqual(findToolsDef);
    const r = await c.ask("tools/call", {
      name: "call_tool",
      arguments: { name: "dial", arguments: { number: "1" } },
    });
    expect(r.error).toBeUndefined();
    expect(c.relayed()).toEqual([["dial", { number: "1" }]]);
  });

  test("call_tool reaches the deferred upstream call_tool by its name, as find_tools returns it", async () => {
    const c = await client();
    const found = (await c.ask("tools/call", { name: "find_tools", arguments: { query: "phone call" } }))
      .result as { structuredContent: { tools: { name: string; toolset: string }[] } };
    expect(found.structuredContent.tools[0]).toMatchObject({ name: "call_tool", toolset: "phone" });
    const r = await c.ask("tools/call", {
      name: "call_tool",
      arguments: { name: "call_tool", arguments: { number: "555" } },
    });
    expect(r.error).toBeUndefined();
    expect(r.result).toEqual({ content: [{ type: "text", text: "upstream call_tool" }] });
    expect(c.relayed()).toEqual([["call_tool", { number: "555" }]]);
  });

  test("the same holds for find_tools and list_server_toolsets: the built-in by its name, the upstream's through call_tool", async () => {
    const c = await client();
    const search = await c.ask("tools/call", { name: "find_tools", arguments: { query: "dial" } });
    expect(
      (search.result as { structuredContent: { total: number } }).structuredContent.total,
    ).toBeGreaterThan(0);
    const report = await c.ask("tools/call", { name: "list_server_toolsets", arguments: {} });
    expect((report.result as { structuredContent: { active: string[] } }).structuredContent.active).toContain(
      "phone",
    );
    expect(c.relayed()).toEqual([]);
    await c.ask("tools/call", {
      name: "call_tool",
      arguments: { name: "find_tools", arguments: { number: "2" } },
    });
    await c.ask("tools/call", { name: "call_tool", arguments: { name: "list_server_toolsets" } });
    expect(c.relayed()).toEqual([
      ["find_tools", { number: "2" }],
      ["list_server_toolsets", {}],
    ]);
  });

  test("without an upstream call_tool, call_tool never runs itself", async () => {
    const c = await client("only=core&defer=core");
    const r = await c.ask("tools/call", { name: "call_tool", arguments: { name: "call_tool" } });
    expect(r.error).toMatchObject({
      code: -32602,
      message: expect.stringContaining("Unknown tool: call_tool"),
    });
  });
});

describe("a listed upstream tool of a built-in's name wins it", () => {
  test("a listed upstream call_tool is the one called, and find_tools' description sends the model to the tools' own names", async () => {
    const c = await client("dial");
    const tools = await c.listed();
    expect(tools.map((t) => t.name)).toEqual(["echo", "call_tool", "find_tools", "list_server_toolsets"]);
    expect(tools.find((t) => t.name === "call_tool")?.description).toBe("Places a phone call.");
    const find = tools.find((t) => t.name === "find_tools");
    expect(find).toEqual(findToolsDefBeside);
    expect(find?.description).not.toContain("run one with call_tool");
    expect(find?.description).toContain("call one by its own name");
    await c.ask("tools/call", { name: "call_tool", arguments: { number: "7" } });
    // A deferred tool is served by its own name.
    await c.ask("tools/call", { name: "dial", arguments: { number: "8" } });
    expect(c.relayed()).toEqual([
      ["call_tool", { number: "7" }],
      ["dial", { number: "8" }],
    ]);
  });

  test("a listed upstream find_tools leaves call_tool saying the deferred tools cannot be searched, and the report names it", async () => {
    const c = await client("shop");
    const tools = await c.listed();
    expect(tools.find((t) => t.name === "find_tools")?.description).toBe("Finds hardware tools in a shop.");
    expect(tools.find((t) => t.name === "call_tool")).toEqual(callToolDefBeside);
    const report = await c.ask("tools/call", { name: "list_server_toolsets", arguments: {} });
    expect(
      (report.result as { structuredContent: { shadowed: unknown } }).structuredContent.shadowed,
    ).toEqual([
      {
        name: "find_tools",
        upstream: "up",
        toolsets: ["shop"],
        detail: expect.stringContaining("the deferred tools cannot be searched"),
      },
    ]);
  });

  test("with nothing deferred, an upstream call_tool is just a tool and nothing is reported shadowed", async () => {
    const c = await client("only=dial");
    expect((await c.listed()).map((t) => t.name)).toEqual(["call_tool", "list_server_toolsets"]);
    const report = await c.ask("tools/call", { name: "list_server_toolsets", arguments: {} });
    expect((report.result as { structuredContent: Params }).structuredContent.shadowed).toBeUndefined();
  });
});
