/**
 * Client profiles over stdio, through the real CLI (`serve --transport stdio`) with a real SDK stdio client: the
 * session opens before the client's initialize, and the profile its clientInfo matches is applied from the
 * first tools/list on, as over HTTP (SPEC §14.5).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, describe, expect, test } from "vitest";
import { CLI, FIXTURE, ROOT, tempDir, toolNames } from "../helpers/proc.js";

const tmp = tempDir();
const config = tmp.file(
  "packs.yaml",
  `upstreams:
  main:
    command: node
    args: [${JSON.stringify(FIXTURE)}, "--tools", "echo,add,slow,fail"]
toolsets:
  fx: { tools: [main/echo] }
  fy: { tools: [main/add, main/slow, main/fail] }
clients:
  - client: tiny
    max_tools: 4
  - client: picky
    selection: only=fy
`,
);

const clients: Client[] = [];
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  tmp.cleanup();
});

/** A real stdio client named `name` that launches toolpacks over the config. */
async function stdio(name: string, args: string[] = []): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "serve", "--transport", "stdio", config, ...args],
    cwd: ROOT,
    env: { ...(process.env as Record<string, string>), TOOLPACKS_LOG_LEVEL: "warn" },
    stderr: "pipe",
  });
  const client = new Client({ name, version: "1.0.0" });
  clients.push(client);
  await client.connect(transport);
  return client;
}

describe("a stdio client's profile decides its list", () => {
  test("a stdio client whose profile caps it at 4 tools gets 4, with find_tools and call_tool, and is told why", async () => {
    const c = await stdio("tiny");
    const listed = await toolNames(c);
    expect(listed).toEqual(["echo", "find_tools", "call_tool", "list_server_toolsets"]);
    const found = await c.callTool({ name: "find_tools", arguments: { query: "add two numbers" } });
    const hits = (found.structuredContent as { tools: { name: string; toolset: string }[] }).tools;
    expect(hits[0]).toMatchObject({ name: "add", toolset: "fy" });
    const sum = await c.callTool({
      name: "call_tool",
      arguments: { name: "add", arguments: { a: 2, b: 3 } },
    });
    expect(sum.structuredContent).toEqual({ sum: 5 });
    const report = await c.callTool({ name: "list_server_toolsets", arguments: {} });
    const payload = report.structuredContent as Record<string, unknown>;
    expect(payload.deferred_by_profile).toEqual([
      { name: "fy", reason: "max_tools 4: 5 tools would be listed" },
    ]);
    expect(payload.client_profile).toMatchObject({ client: ["tiny"], within_caps: true });
  });

  test("another name over the same stdio command gets every tool", async () => {
    const listed = await toolNames(await stdio("some-agent"));
    expect(listed).toEqual(["echo", "add", "slow", "fail", "list_server_toolsets"]);
  });

  test("a stdio client whose profile has its own selection gets it when --toolsets names nothing", async () => {
    expect(await toolNames(await stdio("picky"))).toEqual(["add", "slow", "fail", "list_server_toolsets"]);
    // A selection the command names is read as it says.
    expect(await toolNames(await stdio("picky", ["--toolsets", "only=fx"]))).toEqual([
      "echo",
      "list_server_toolsets",
    ]);
  });
});
