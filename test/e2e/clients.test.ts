/**
 * Client profiles through the real CLI with real SDK clients and real servers from npm (server-everything,
 * -filesystem, -memory, -sequential-thinking: 40 tools and list_server_toolsets): a client named "cursor"
 * gets at most Cursor's 40 with find_tools finding what was deferred; another name at the same URL gets the
 * whole list; a 2026-07-28 request with "cursor" in its envelope gets what the cursor session gets; /toolsets,
 * `toolsets --client` and the session's log line say what was deferred and why.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ToolsetsReport } from "../../src/report.js";
import { runCli, type Served, serve, tempDir, until } from "../helpers/proc.js";
import { initializeRequest, post, request } from "../helpers/wire.js";

const V = "2026-07-28";
const tmp = tempDir();
writeFileSync(join(tmp.dir, "notes.md"), "# notes\n");
const config = tmp.file(
  "packs.yaml",
  `upstreams:
  everything: { command: mcp-server-everything }
  files: { command: mcp-server-filesystem, args: [${JSON.stringify(tmp.dir)}] }
  memory:
    command: mcp-server-memory
    env: { MEMORY_FILE_PATH: ${JSON.stringify(join(tmp.dir, "memory.jsonl"))} }
  thinking: { command: mcp-server-sequential-thinking }
toolsets:
  everything: { tools: [everything/*] }
  files: { description: The project folder., tools: [files/*] }
  memory: { title: Memory, description: A knowledge graph., tools: [memory/*] }
  thinking: { tools: [thinking/*] }
clients:
  - client: terse-*
    max_description_bytes: 48
  - client: tiny
    max_tools: 3
`,
);
const always = tmp.file(
  "always.yaml",
  `upstreams:
  everything: { command: mcp-server-everything }
toolsets:
  core: { always: true, tools: [everything/echo, everything/get-sum, everything/get-env] }
  more: { tools: [everything/get-tiny-image] }
clients:
  - client: tiny
    max_tools: 3
`,
);

let served: Served;
let small: Served;
const clients: Client[] = [];
async function client(name: string, query = "", server = served): Promise<Client> {
  const c = new Client({ name, version: "1.0.0" }, { capabilities: {} });
  await c.connect(new StreamableHTTPClientTransport(new URL(server.url(query))));
  clients.push(c);
  return c;
}
const names = async (c: Client) => (await c.listTools()).tools.map((t) => t.name);
const report = async (url: string) => (await (await fetch(url)).json()) as ToolsetsReport;

beforeAll(async () => {
  [served, small] = await Promise.all([serve([config]), serve([always])]);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await Promise.all([served?.stop(), small?.stop()]);
  tmp.cleanup();
});

/** One raw 2026-07-28 request, its client named in the envelope. */
async function modern(method: string, params: Record<string, unknown>, clientName: string) {
  const res = await fetch(served.url(), {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": V,
      "mcp-method": method,
      ...(typeof params.name === "string" ? { "mcp-name": params.name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": V,
          "io.modelcontextprotocol/clientCapabilities": {},
          "io.modelcontextprotocol/clientInfo": { name: clientName, version: "1.0.0" },
        },
      },
    }),
  });
  const text = await res.text();
  const body = (res.headers.get("content-type") ?? "").includes("text/event-stream")
    ? text
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => JSON.parse(l.slice(5)))
        .find((m) => m.id === 1)
    : JSON.parse(text);
  return body as { result?: Record<string, unknown>; error?: { message: string } };
}

describe("a client's profile decides its list, not the URL alone", () => {
  test('a client named "cursor" gets at most 40 tools, and find_tools finds what was deferred', async () => {
    const c = await client("cursor");
    const listed = await names(c);
    expect(listed.length).toBeLessThanOrEqual(40);
    expect(listed).toContain("find_tools");
    expect(listed).toContain("call_tool");
    // Over 40, the last declared toolset went first, then memory; thinking fitted back in.
    expect(listed).not.toContain("create_entities");
    expect(listed).toContain("sequentialthinking");
    const found = await c.callTool({ name: "find_tools", arguments: { query: "remember a new person" } });
    const hits = (found.structuredContent as { tools: { name: string; toolset: string }[] }).tools;
    expect(hits[0]).toMatchObject({ name: "create_entities", toolset: "memory" });
    const graph = await c.callTool({ name: "call_tool", arguments: { name: "read_graph", arguments: {} } });
    expect(graph.isError).toBeFalsy();
    const report = await c.callTool({ name: "list_server_toolsets", arguments: {} });
    const payload = report.structuredContent as Record<string, unknown>;
    expect(payload.deferred_by_profile).toEqual([
      { name: "memory", reason: "max_tools 40: 41 tools would be listed" },
    ]);
    expect(payload.client_profile).toMatchObject({
      client: ["cursor*"],
      from: "built-in",
      within_caps: true,
    });
  });

  test("the same URL with another name gets the whole list", async () => {
    const listed = await names(await client("some-agent"));
    expect(listed).toHaveLength(41);
    expect(listed).toContain("create_entities");
    expect(listed).not.toContain("find_tools");
  });

  test('a 2026-07-28 request with "cursor" in its envelope gets what the cursor session gets', async () => {
    const session = await names(await client("cursor"));
    const list = await modern("tools/list", {}, "cursor");
    expect((list.result!.tools as { name: string }[]).map((t) => t.name)).toEqual(session);
    const other = await modern("tools/list", {}, "some-agent");
    expect((other.result!.tools as unknown[]).length).toBe(41);
    // Its find_tools searches what its profile deferred.
    const found = await modern(
      "tools/call",
      { name: "find_tools", arguments: { query: "forget a person" } },
      "cursor",
    );
    const hits = (found.result!.structuredContent as { tools: { name: string }[] }).tools.map((t) => t.name);
    expect(hits).toContain("delete_entities");
  });

  test("a profile's description budget cuts what is listed; find_tools returns the whole text", async () => {
    const c = await client("terse-bot");
    const tools = (await c.listTools()).tools;
    const read = tools.find((t) => t.name === "read_text_file")!;
    expect(Buffer.byteLength(read.description ?? "")).toBeLessThanOrEqual(48);
    expect(read.description).toMatch(/…$/);
    const found = await c.callTool({ name: "find_tools", arguments: { query: "read_text_file" } });
    const hit = (found.structuredContent as { tools: { name: string; description: string }[] }).tools[0]!;
    expect(hit.name).toBe("read_text_file");
    expect(Buffer.byteLength(hit.description)).toBeGreaterThan(48);
    expect(hit.description.startsWith(read.description!.slice(0, -1).trimEnd())).toBe(true);
  });

  test("when even the always toolsets exceed the cap, the session opens with them and the log says so", async () => {
    const c = await client("tiny", "", small);
    expect(await names(c)).toEqual([
      "echo",
      "get-sum",
      "get-env",
      "find_tools",
      "call_tool",
      "list_server_toolsets",
    ]);
    const line = await until(
      () =>
        small
          .stderr()
          .split("\n")
          .find((l) => l.includes("over its client's caps")),
      "the warning",
    );
    expect(line).toMatch(/max_tools 3: 6 tools are listed/);
  });
});

describe("replicas", () => {
  test("a session rebuilt from its signed id on another replica gets the profile it was opened with", async () => {
    const env = { TOOLPACKS_SESSION_SECRET: "clients-secret-0123456789" };
    const [a, b] = await Promise.all([serve([always], env), serve([always], env)]);
    try {
      const init = initializeRequest();
      const opened = await post(a.url(), {
        ...init,
        params: { ...init.params, clientInfo: { name: "tiny", version: "1.0.0" } },
      });
      const session = opened.headers.get("mcp-session-id")!;
      await post(a.url(), { jsonrpc: "2.0", method: "notifications/initialized" }, { session });
      const { answer } = await request(b.url(), session, 1, "tools/list");
      const listed = (answer.result as { tools: { name: string }[] }).tools.map((t) => t.name);
      expect(listed).toEqual([
        "echo",
        "get-sum",
        "get-env",
        "find_tools",
        "call_tool",
        "list_server_toolsets",
      ]);
      expect(b.stderr()).toMatch(/session rebuilt .*client=tiny/);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});

describe("what reports say", () => {
  test("/toolsets?client=NAME shows what that client would get, and why", async () => {
    const cursor = await report(`${served.base}/toolsets?client=cursor-vscode`);
    expect(cursor.deferred_by_profile).toEqual([
      { name: "memory", reason: "max_tools 40: 41 tools would be listed" },
    ]);
    expect(cursor.tools).toHaveLength(34);
    expect(cursor.toolsets.find((t) => t.name === "memory")?.deferred).toBe(true);
    const plain = await report(`${served.base}/toolsets`);
    expect(plain.deferred_by_profile).toBeUndefined();
    expect(plain.client_profile).toBeUndefined();
    expect(plain.tools).toHaveLength(41);
    // `client` is the client here, never an unknown toolset.
    expect(cursor.unknown).toEqual([]);
  });

  test("toolpacks toolsets --client answers the same without a server", async () => {
    const live = await runCli(["toolsets", config, "--client", "cursor-vscode", "--live", "--json"]);
    expect(live.code).toBe(0);
    const json = JSON.parse(live.stdout);
    expect(json.deferred_by_profile).toEqual([
      { name: "memory", reason: "max_tools 40: 41 tools would be listed" },
    ]);
    expect(json.tools).toHaveLength(34);
    const text = await runCli(["toolsets", config, "--client", "cursor-vscode"]);
    expect(text.stdout).toContain("client profile: cursor* (built-in): max_tools 40, defer auto");
    const none = await runCli(["toolsets", config, "--client", "claude-code"]);
    expect(none.stdout).toContain('no client profile matches "claude-code": it is served as any client');
  });

  test("the session's log line names the client, its profile, and what it deferred", async () => {
    await client("cursor", "only=everything,files,memory,thinking");
    const line = await until(
      () =>
        served
          .stderr()
          .split("\n")
          .find((l) => l.includes("session opened") && l.includes("deferred_by_profile")),
      "the session line",
    );
    expect(line).toContain("client=cursor");
    expect(line).toMatch(/client_profile="?cursor\* \(built-in\)/);
    expect(line).toContain("memory");
  });
});
