/**
 * Ownership decides who gets what an upstream sends tied to no call (SPEC §10.5): behind `serve --transport
 * stdio` every instance serves the one client that launched toolpacks, so a shared upstream's sampling,
 * elicitation, roots and log lines are that client's. (Before, a desktop client could use no server's sampling
 * or elicitation through toolpacks: "cannot tell which client sampling/createMessage is for … the shared
 * instance serves 1 client session(s)".) Behind HTTP a shared instance still delivers only what is tied.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, expect, test } from "vitest";
import { CLI, httpClient, ROOT, serve, tempDir, until } from "../helpers/proc.js";

const tmp = tempDir();
const closing: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of closing.splice(0).reverse()) await c().catch(() => {});
});
afterAll(() => tmp.cleanup());

/** server-everything over stdio, declared without isolation: the shared instance. */
const config = () =>
  tmp.file("everything.yaml", "upstreams:\n  every: { command: mcp-server-everything, args: [stdio] }\n");

/** A client that can be asked everything (sampling, elicitation, roots), connected over stdio. */
async function desktopClient() {
  const asked: string[] = [];
  const client = new Client(
    { name: "desktop", version: "1" },
    { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } },
  );
  client.setRequestHandler(CreateMessageRequestSchema, async () => {
    asked.push("sampling/createMessage");
    return { role: "assistant", content: { type: "text", text: "a poem" }, model: "m" };
  });
  client.setRequestHandler(ElicitRequestSchema, async () => {
    asked.push("elicitation/create");
    return { action: "accept", content: { color: "red", number: 7, pets: "cats" } };
  });
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    asked.push("roots/list");
    return { roots: [{ uri: "file:///work/desktop", name: "desktop" }] };
  });
  const logs: string[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    logs.push(String((n.params as { level?: string }).level));
  });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, "serve", "--transport", "stdio", config()],
      cwd: ROOT,
      env: { ...(process.env as Record<string, string>), TOOLPACKS_LOG_LEVEL: "warn" },
      stderr: "ignore",
    }),
  );
  closing.push(() => client.close());
  return { client, asked, logs };
}

const text = (r: Record<string, unknown>) =>
  (r.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("\n");

test("over stdio, a shared upstream's sampling and elicitation are asked of the one client (server-everything, left shared)", async () => {
  const { client, asked } = await desktopClient();
  const tools = (await client.listTools()).tools.map((t) => t.name);
  expect(tools).toEqual(expect.arrayContaining(["trigger-sampling-request", "trigger-elicitation-request"]));
  const sampled = await client.callTool({
    name: "trigger-sampling-request",
    arguments: { prompt: "a poem" },
  });
  expect(sampled.isError).not.toBe(true);
  expect(text(sampled)).toContain("a poem");
  const elicited = await client.callTool({ name: "trigger-elicitation-request", arguments: {} });
  expect(elicited.isError).not.toBe(true);
  expect(text(elicited)).toMatch(/accept/);
  expect(asked).toEqual(expect.arrayContaining(["sampling/createMessage", "elicitation/create"]));
});

test("over stdio, a shared upstream is told the client's roots, asks the client for them, and lists the tool that needs them", async () => {
  const { client, asked } = await desktopClient();
  const tools = (await client.listTools()).tools.map((t) => t.name);
  // server-everything lists get-roots-list only to a client that declared roots: toolpacks declares them for its
  // one client now, and answers roots/list from that client, not from the config.
  expect(tools).toContain("get-roots-list");
  await until(() => asked.includes("roots/list"), "the upstream asked the client for its roots");
  const listed = await client.callTool({ name: "get-roots-list", arguments: {} });
  expect(text(listed)).toContain("file:///work/desktop");
});

test("over stdio, a shared upstream's log lines reach the one client at its level", async () => {
  const { client, logs } = await desktopClient();
  await client.setLoggingLevel("debug");
  await client.callTool({ name: "toggle-simulated-logging", arguments: {} });
  await until(() => logs.length > 0, "a simulated log line reached the client");
  await client.callTool({ name: "toggle-simulated-logging", arguments: {} });
});

test("over HTTP, a shared instance still refuses what is tied to no call: several clients may use it", async () => {
  const served = await serve([config()]);
  closing.push(() => served.stop());
  const asked: string[] = [];
  const client = await httpClient(served.url(), { sampling: {} });
  client.setRequestHandler(CreateMessageRequestSchema, async () => {
    asked.push("sampling/createMessage");
    return { role: "assistant", content: { type: "text", text: "a poem" }, model: "m" };
  });
  closing.push(() => client.close());
  const r = await client.callTool({ name: "trigger-sampling-request", arguments: { prompt: "a poem" } });
  // A stdio upstream's pipe ties nothing to a call: the request is refused to the upstream, never guessed.
  expect(asked).toEqual([]);
  expect(JSON.stringify(r)).toMatch(/cannot tell which client sampling\/createMessage is for/);
});
