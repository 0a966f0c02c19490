/** Serving in front of our own fixture servers: laziness, refresh-then-recheck, errors as the upstream sent them. */
import { existsSync, readFileSync } from "node:fs";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { FIXTURE, httpClient, type Served, serve, tempDir, toolNames } from "../helpers/proc.js";

const tmp = tempDir();
const config = tmp.file(
  "packs.yaml",
  `
name: fixture-gateway
upstreams:
  main:
    command: node
    args: ["${FIXTURE}", "--grow-after", "1", "--events-file", "${tmp.dir}/main.events"]
  lazy:
    command: node
    args: ["${FIXTURE}", "--name", "lazy", "--pid-file", "${tmp.dir}/lazy.pid", "--tools", "add"]
toolsets:
  core:
    tools: [main/echo, main/fail, main/throw, main/with_meta]
  late:
    default: false
    tools: [main/late_tool]
  math:
    default: false
    tools: [lazy/add]
`,
);
let served: Served;
const clients: Client[] = [];
const open = async (q: string) => {
  const c = await httpClient(served.url(q));
  clients.push(c);
  return c;
};

beforeAll(async () => {
  served = await serve([config]);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await served?.stop();
  tmp.cleanup();
});

describe("in front of fixture servers", () => {
  test("an opt-in toolset's upstream process is not started before a URL asks for it", async () => {
    const c = await open("");
    expect(await toolNames(c)).toEqual(["echo", "fail", "throw", "with_meta", "list_server_toolsets"]);
    expect(existsSync(`${tmp.dir}/lazy.pid`)).toBe(false);
    const m = await open("math");
    expect(await toolNames(m)).toContain("add");
    expect(existsSync(`${tmp.dir}/lazy.pid`)).toBe(true);
  });

  test("a pack whose tool appeared without list_changed is served after a refresh", async () => {
    // The first session listed main's tools once (no late_tool); asking for ?late must refresh, then recheck.
    await open("");
    const c = await open("late");
    expect(await toolNames(c)).toContain("late_tool");
    const lists = readFileSync(`${tmp.dir}/main.events`, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { event: string })
      .filter((e) => e.event === "list");
    expect(lists.length).toBe(2);
    expect(await c.callTool({ name: "late_tool", arguments: { text: "x" } })).toMatchObject({
      content: [{ type: "text" }],
    });
  });

  test("an upstream's isError result stays a result, not a protocol error", async () => {
    const c = await open("");
    const r = await c.callTool({ name: "fail", arguments: { text: "broken on purpose" } });
    expect(r).toEqual({ content: [{ type: "text", text: "broken on purpose" }], isError: true });
  });

  test("an upstream's JSON-RPC error keeps its code and data, and gains no second prefix", async () => {
    const c = await open("");
    const err = await c.callTool({ name: "throw", arguments: {} }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: -32042, data: { detail: 42 } });
    // What a client talking to the fixture directly sees: the fixture's own message, with one SDK prefix added.
    expect((err as Error).message).toBe("MCP error -32042: MCP error -32042: custom failure");
  });

  test("_meta and unknown fields of a tool and its result are kept", async () => {
    const c = await open("");
    const raw = (await c.request(
      { method: "tools/list", params: {} },
      (
        await import("@modelcontextprotocol/sdk/types.js")
      ).ResultSchema,
    )) as {
      tools: Record<string, unknown>[];
    };
    const def = raw.tools.find((t) => t.name === "with_meta");
    expect(def).toMatchObject({ _meta: { ui: { resourceUri: "ui://x" } }, "x-vendor": "tag" });
    const r = await c.callTool({ name: "with_meta", arguments: {} });
    expect(r._meta).toBeDefined();
  });
});
