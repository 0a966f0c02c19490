/** The bundled example served for real: server-everything, server-memory and server-filesystem behind one URL. */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  alive,
  descendants,
  httpClient,
  type Served,
  serve,
  stdioClient,
  tempDir,
  toolNames,
} from "../helpers/proc.js";

const BASICS = ["echo", "get-sum", "get-tiny-image"];
const FILES = ["read_text_file", "list_directory", "directory_tree", "search_files", "get_file_info"];
const NOTES = [
  "create_entities",
  "create_relations",
  "add_observations",
  "delete_entities",
  "delete_observations",
  "delete_relations",
  "read_graph",
  "search_nodes",
  "open_nodes",
];
const DIAG = ["trigger-long-running-operation", "toggle-simulated-logging", "weather"];
const T = "list_server_toolsets";

const tmp = tempDir();
const env = { TOOLPACKS_MEMORY_FILE: `${tmp.dir}/memory.jsonl` };
let served: Served;
const clients: Client[] = [];

beforeAll(async () => {
  served = await serve(["packs.example.yaml"], env);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await served?.stop();
  tmp.cleanup();
});

async function open(query: string): Promise<Client> {
  const c = await httpClient(served.url(query));
  clients.push(c);
  return c;
}

describe("one URL serves exactly the tools its query asks for", () => {
  test.each([
    ["a bare URL serves the defaults only", "", [...BASICS, ...FILES, T]],
    ["a bare flag adds its toolset", "notes", [...BASICS, ...FILES, ...NOTES, T]],
    ["a flag with a value adds its toolset", "notes=1", [...BASICS, ...FILES, ...NOTES, T]],
    [
      "toolsets= with two names adds both",
      "toolsets=notes,diagnostics",
      [...BASICS, ...FILES, ...NOTES, ...DIAG, T],
    ],
    [
      "space-separated names are read as two",
      "toolsets=notes%20diagnostics",
      [...BASICS, ...FILES, ...NOTES, ...DIAG, T],
    ],
    ["only= drops the defaults", "only=notes", [...NOTES, T]],
    ["without= removes a default", "without=files", [...BASICS, T]],
    ["only= and without= together: without= wins", "only=notes,basics&without=notes", [...BASICS, T]],
    ["an unknown name does not refuse the connection", "bogus&only=diagnostics", [...DIAG, T]],
  ])("%s (?%s)", async (_bug, query, expected) => {
    const c = await open(query);
    expect(await toolNames(c)).toEqual(expected);
  });

  test("a renamed tool is called under its exposed name and reaches the right upstream tool", async () => {
    const c = await open("only=diagnostics");
    const r = await c.callTool({ name: "weather", arguments: { location: "Chicago" } });
    expect(r.structuredContent).toMatchObject({ temperature: expect.any(Number) });
    const tools = (await c.listTools()).tools;
    expect(tools.find((t) => t.name === "weather")?.description).toBe(
      "The weather of a city, as structured content.",
    );
  });

  test("a call through the proxy keeps the upstream's result", async () => {
    const c = await open("");
    expect(await c.callTool({ name: "get-sum", arguments: { a: 2, b: 40 } })).toMatchObject({
      content: [{ type: "text", text: expect.stringContaining("42") }],
    });
    const dir = await c.callTool({ name: "list_directory", arguments: { path: "." } });
    expect(JSON.stringify(dir.content)).toContain("README.md");
  });

  test("an unknown tool is answered naming it", async () => {
    const c = await open("");
    await expect(c.callTool({ name: "create_entities", arguments: {} })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("Unknown tool: create_entities"),
    });
  });
});

describe("what a client can learn before and inside a session", () => {
  test("/healthz answers ok, with the name and the session count", async () => {
    const r = await fetch(`${served.base}/healthz`);
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({
      ok: true,
      name: "toolpacks-example",
      sessions: expect.any(Number),
    });
  });

  test("/toolsets agrees with what a session gets", async () => {
    const r = await fetch(`${served.base}/toolsets?notes&benchmrks`);
    const body = (await r.json()) as Record<string, unknown>;
    expect(body.active).toEqual(["basics", "files", "notes"]);
    expect(body.unknown).toEqual(["benchmrks"]);
    expect(body.unavailable).toEqual([]);
    expect(body.tools).toEqual([...BASICS, ...FILES, ...NOTES, T]);
    expect(body.toolsets).toContainEqual(
      expect.objectContaining({
        name: "notes",
        title: "Notes",
        description: expect.any(String),
        default: false,
        always: false,
        active: true,
      }),
    );
    const c = await open("notes&benchmrks");
    expect(await toolNames(c)).toEqual(body.tools);
  });

  test("a query over the bounds gets a clear 400, not a crash", async () => {
    const r = await fetch(
      `${served.base}/toolsets?toolsets=${Array.from({ length: 400 }, (_, i) => `n${i}`).join(",")}`,
    );
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: string }).error).toMatch(/too many/);
  });

  test("instructions of toolsets the session did not select never leak into it", async () => {
    const c = await open("only=notes");
    expect(c.getInstructions()).toBe(
      "Tools are grouped by subject. Call list_server_toolsets to see what else this server offers.\n\n## Notes\n\nSearch the graph before you create an entity; add observations rather than duplicates.",
    );
    const d = await open("");
    expect(d.getInstructions()).toContain("## Files");
    expect(d.getInstructions()).not.toContain("## Notes");
  });

  test("list_server_toolsets answers as /toolsets does", async () => {
    const c = await open("without=files&typo");
    const tool = (await c.listTools()).tools.find((t) => t.name === T);
    expect(tool?.annotations).toMatchObject({
      readOnlyHint: true,
      idempotentHint: true,
      openWorldHint: false,
    });
    const r = await c.callTool({ name: T, arguments: {} });
    const payload = r.structuredContent as Record<string, unknown>;
    const route = (await (await fetch(`${served.base}/toolsets?without=files&typo`)).json()) as Record<
      string,
      unknown
    >;
    expect({ ...payload, how_to_select: undefined }).toEqual({ ...route, how_to_select: undefined });
    expect(payload.how_to_select).toMatch(/only=/);
    expect(payload.unknown).toEqual(["typo"]);
  });
});

describe("sessions", () => {
  test("a request without a session id, or with an unknown one, is refused", async () => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const missing = await fetch(served.url(), { method: "POST", headers, body });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { error: { code: number } }).error.code).toBe(-32000);
    const unknown = await fetch(served.url(), {
      method: "POST",
      headers: { ...headers, "mcp-session-id": "nope" },
      body,
    });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32001 } });
  });

  test("DELETE ends the session", async () => {
    const c = await open("");
    const transport = c.transport as unknown as { sessionId: string; terminateSession(): Promise<void> };
    const id = transport.sessionId;
    await transport.terminateSession();
    const r = await fetch(served.url(), {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": id,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(r.status).toBe(404);
  });
});

describe("over stdio", () => {
  test.each([
    ["--toolsets selects over stdio", ["--toolsets", "only=notes"], [...NOTES, T]],
    ["the stdio default is the HTTP default", [], [...BASICS, ...FILES, T]],
    ["without= works over stdio", ["--toolsets", "diagnostics&without=files"], [...BASICS, ...DIAG, T]],
  ])("%s", async (_bug, args, expected) => {
    const { client } = await stdioClient([...args, "packs.example.yaml"], env);
    try {
      expect(await toolNames(client)).toEqual(expected);
      expect(await client.callTool({ name: T, arguments: {} })).toMatchObject({
        structuredContent: { active: expect.any(Array) },
      });
    } finally {
      await client.close();
    }
  });

  test("the stdio server and its upstreams exit when the client closes stdin", async () => {
    const { client, pid } = await stdioClient(["--toolsets", "notes", "packs.example.yaml"], env);
    await client.listTools();
    const proxy = pid()!;
    const children = descendants(proxy);
    expect(children.length).toBeGreaterThanOrEqual(3);
    await client.close();
    await waitFor(() => !alive(proxy) && children.every((p) => !alive(p)));
  });
});

describe("shutdown", () => {
  test("SIGTERM exits 0 and leaves no orphaned upstream process", async () => {
    const own = await serve(["packs.example.yaml"], env);
    const c = await httpClient(own.url("notes"));
    await c.listTools();
    const children = descendants(own.proc.pid!);
    expect(children.length).toBeGreaterThanOrEqual(3);
    expect(await own.stop("SIGTERM")).toBe(0);
    await waitFor(() => children.every((p) => !alive(p)));
    await c.close().catch(() => {});
  });
});

async function waitFor(check: () => boolean, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error("condition not reached");
    await new Promise((r) => setTimeout(r, 50));
  }
}
