/**
 * Deferred toolsets through the real CLI with real SDK clients: server-filesystem from npm behind find_tools and
 * call_tool over Streamable HTTP and stdio, capture and handles through call_tool, a per-session upstream's
 * deferred tool on the session's own instance, automatic deferral, and what /toolsets and `toolsets --live` say.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { Client as ModernClient, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, describe, expect, test } from "vitest";
import { FIXTURE, runCli, servedForFile, stdioClient, tempDir, toolNames } from "../helpers/proc.js";

const tmp = tempDir();
writeFileSync(`${tmp.dir}/notes.txt`, "buy milk\n");
const SHARED = `
upstreams:
  fs:
    command: mcp-server-filesystem
    args: ["${tmp.dir}"]
  main:
    command: node
    args: ["${FIXTURE}", "--tools", "echo,add", "--big"]`;
const UPSTREAMS = `${SHARED}
  mine:
    command: node
    args: ["${FIXTURE}", "--name", "mine", "--tools", "", "--whoami"]
    isolation: per-session
    prefix: mine_
  every:
    command: mcp-server-everything
    isolation: per-session
    prefix: e_
`;
const config = tmp.file(
  "packs.yaml",
  `${UPSTREAMS}
toolsets:
  core:
    tools: [main/echo, main/add]
  files:
    title: Files
    description: Read and write files in the project folder.
    deferred: true
    tools: [fs/*]
  large:
    deferred: true
    capture: { over_bytes: 1000 }
    tools: [main/big]
  private:
    default: false
    deferred: true
    tools: [mine/*]
  asks:
    default: false
    deferred: true
    tools: [every/trigger-elicitation-request, every/echo]
`,
);
const autoConfig = tmp.file(
  "auto.yaml",
  `search: { auto_over_tokens: 300 }
${SHARED}
toolsets:
  core:
    always: true
    tools: [main/echo]
  files:
    tools: [fs/*]
`,
);

const { served, open } = servedForFile([config], tmp.cleanup);
const text = (r: Record<string, unknown>) =>
  (r.content as { text?: string }[]).map((c) => c.text ?? "").join("");
type Found = { tools: { name: string; toolset: string; inputSchema: unknown }[]; total: number };

describe("over Streamable HTTP", () => {
  test("list_server_toolsets says which toolsets are deferred in the session", async () => {
    const c = await open("defer=core");
    const r = await c.callTool({ name: "list_server_toolsets", arguments: {} });
    const report = r.structuredContent as {
      toolsets: { name: string; deferred: boolean }[];
      tools: string[];
    };
    expect(report.toolsets.map((t) => [t.name, t.deferred])).toEqual([
      ["core", true],
      ["files", true],
      ["large", true],
      ["private", true],
      ["asks", true],
    ]);
    expect(report.tools).toEqual(["find_tools", "call_tool", "list_server_toolsets", "inspect_state"]);
  });

  test("deferred toolsets leave tools/list; find_tools and call_tool stand in for them", async () => {
    const c = await open();
    expect(await toolNames(c)).toEqual([
      "echo",
      "add",
      "find_tools",
      "call_tool",
      "list_server_toolsets",
      "inspect_state",
    ]);
    const { tools } = await c.listTools();
    expect(tools.find((t) => t.name === "find_tools")?.annotations).toMatchObject({
      readOnlyHint: true,
      openWorldHint: false,
    });
  });

  test("?defer=all defers the listed toolsets too", async () => {
    const c = await open("defer=all");
    expect(await toolNames(c)).toEqual(["find_tools", "call_tool", "list_server_toolsets", "inspect_state"]);
    const r = await c.callTool({ name: "call_tool", arguments: { name: "add", arguments: { a: 2, b: 3 } } });
    expect(r.structuredContent).toEqual({ sum: 5 });
  });

  test("find_tools finds a real server's tool, and call_tool runs it as a direct call would", async () => {
    const c = await open();
    const found = (await c.callTool({ name: "find_tools", arguments: { query: "read a text file" } }))
      .structuredContent as Found;
    const hit = found.tools.find((t) => t.name === "read_text_file");
    expect(hit).toMatchObject({ toolset: "files", inputSchema: { type: "object" } });
    const path = `${tmp.dir}/notes.txt`;
    const through = await c.callTool({
      name: "call_tool",
      arguments: { name: "read_text_file", arguments: { path } },
    });
    const direct = await c.callTool({ name: "read_text_file", arguments: { path } });
    expect(text(through)).toBe("buy milk\n");
    expect(through).toEqual(direct);
  });

  test("bad arguments through call_tool get the -32602 a direct call gets, from toolpacks", async () => {
    const c = await open();
    const failure = (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (e: { code: number; message: string; data?: unknown }) => ({
          code: e.code,
          message: e.message,
          data: e.data,
        }),
      );
    const direct = await failure(c.callTool({ name: "read_text_file", arguments: { path: 5 } }));
    const through = await failure(
      c.callTool({ name: "call_tool", arguments: { name: "read_text_file", arguments: { path: 5 } } }),
    );
    expect(direct).toMatchObject({
      code: -32602,
      message: expect.stringContaining("Invalid arguments for tool read_text_file"),
    });
    expect(through).toEqual(direct);
    const unknown = await failure(c.callTool({ name: "call_tool", arguments: { name: "rm_rf" } }));
    expect(unknown).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/Unknown tool: rm_rf.*find_tools/),
    });
  });

  test("a large result through call_tool is kept as a handle, and the handle writes the whole value to a file", async () => {
    const c = await open();
    const big = await c.callTool({
      name: "call_tool",
      arguments: { name: "big", arguments: { bytes: 5000 } },
    });
    const handle = (big._meta as Record<string, { handle: string }>)["toolpacks/handle"]!.handle;
    expect(handle).toBe("@state:large/big/1");
    expect(text(big).length).toBeLessThan(1000);
    const path = `${tmp.dir}/copy.txt`;
    await c.callTool({
      name: "call_tool",
      arguments: { name: "write_file", arguments: { path, content: handle } },
    });
    expect(readFileSync(path, "utf8")).toBe("x".repeat(5000));
  });

  test("a per-session upstream's deferred tool runs on the calling session's own instance", async () => {
    const pids = await Promise.all(
      [0, 1].map(async () => {
        const c = await open("private");
        const r = await c.callTool({ name: "call_tool", arguments: { name: "mine_whoami" } });
        return (r.structuredContent as { pid: number }).pid;
      }),
    );
    expect(pids[0]).not.toBe(pids[1]);
  });

  test("a call through call_tool is counted under the tool's own name", async () => {
    const c = await open();
    await c.callTool({ name: "call_tool", arguments: { name: "list_allowed_directories" } });
    const metrics = await (await fetch(`${served().base}/metrics`)).text();
    expect(metrics).toMatch(
      /toolpacks_calls_total\{toolset="files",tool="list_allowed_directories",upstream="fs",outcome="ok"\} 1/,
    );
    expect(metrics).not.toMatch(/tool="call_tool"/);
  });

  test("/toolsets says which toolsets are deferred and what the list costs with and without deferral: the very list a session gets", async () => {
    const report = (await (await fetch(`${served().base}/toolsets?defer=all`)).json()) as {
      toolsets: { name: string; active: boolean; deferred: boolean }[];
      tools: string[];
      schema_bytes: number;
      without_deferral: { tools: number; schema_bytes: number };
    };
    expect(report.toolsets.map((t) => [t.name, t.active, t.deferred])).toEqual([
      ["core", true, true],
      ["files", true, true],
      ["large", true, true],
      ["private", false, true],
      ["asks", false, true],
    ]);
    // What a session with that URL lists, inspect_state (capture on `large`) included, and its very bytes.
    const c = await open("defer=all");
    const listed = await c.listTools();
    expect(report.tools).toEqual(listed.tools.map((t) => t.name));
    expect(report.tools).toEqual(["find_tools", "call_tool", "list_server_toolsets", "inspect_state"]);
    expect(report.schema_bytes).toBe(Buffer.byteLength(JSON.stringify({ tools: listed.tools })));
    expect(report.schema_bytes).toBeLessThanOrEqual(2048 + 1024);
    expect(report.without_deferral.schema_bytes).toBeGreaterThan(report.schema_bytes * 3);
  });
});

test("over stdio, --toolsets defer=all serves the same find_tools and call_tool", async () => {
  const { client } = await stdioClient(["--toolsets", "defer=all", config]);
  try {
    expect(await toolNames(client)).toEqual([
      "find_tools",
      "call_tool",
      "list_server_toolsets",
      "inspect_state",
    ]);
    const found = (await client.callTool({ name: "find_tools", arguments: { query: "echo text back" } }))
      .structuredContent as Found;
    expect(found.tools[0]?.name).toBe("echo");
    const r = await client.callTool({
      name: "call_tool",
      arguments: { name: "echo", arguments: { text: "hi" } },
    });
    expect(text(r)).toBe("hi");
  } finally {
    await client.close();
  }
});

describe("a 2026-07-28 client over Streamable HTTP", () => {
  const modern: ModernClient[] = [];
  afterAll(async () => {
    await Promise.all(modern.map((c) => c.close().catch(() => {})));
  });

  test("find_tools finds a deferred tool, and call_tool of a tool that asks for input completes through input_required rounds", async () => {
    const c = new ModernClient(
      { name: "v2", version: "1" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } }, capabilities: { elicitation: { form: {} } } },
    );
    await c.connect(new StreamableHTTPClientTransport(new URL(served().url("only=asks"))));
    modern.push(c);
    expect(c.getProtocolEra()).toBe("modern");
    expect((await c.listTools()).tools.map((t) => t.name)).toEqual([
      "find_tools",
      "call_tool",
      "list_server_toolsets",
    ]);
    const found = (
      await c.callTool({ name: "find_tools", arguments: { query: "elicitation request to the user" } })
    ).structuredContent as Found;
    expect(found.tools[0]).toMatchObject({ name: "e_trigger-elicitation-request", toolset: "asks" });
    let asked = 0;
    c.setRequestHandler("elicitation/create", async () => {
      asked++;
      return { action: "accept", content: { name: "Ada", color: "red" } };
    });
    const r = await c.callTool({
      name: "call_tool",
      arguments: { name: "e_trigger-elicitation-request", arguments: {} },
    });
    expect(asked).toBe(1);
    expect(text(r)).toContain("Name: Ada");
  });
});

describe("automatic deferral", () => {
  test("a selection over auto_over_tokens defers every toolset but the always ones", async () => {
    const { client } = await stdioClient([autoConfig]);
    try {
      expect(await toolNames(client)).toEqual(["echo", "find_tools", "call_tool", "list_server_toolsets"]);
    } finally {
      await client.close();
    }
  });

  test("toolsets --live shows the deferred toolsets and both totals", async () => {
    const json = await runCli(["toolsets", "--live", "--json", autoConfig]);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as {
      toolsets: { name: string; deferred: boolean }[];
      schema_bytes: number;
      without_deferral: { schema_bytes: number };
    };
    expect(report.toolsets.map((t) => [t.name, t.deferred])).toEqual([
      ["core", false],
      ["files", true],
    ]);
    expect(report.without_deferral.schema_bytes).toBeGreaterThan(report.schema_bytes);
    const table = await runCli(["toolsets", "--live", autoConfig]);
    expect(table.stdout).toMatch(/^files\s+active, deferred\s/m);
    expect(table.stdout).toMatch(/^no deferral:\s+16 tools/m);
  });
});
