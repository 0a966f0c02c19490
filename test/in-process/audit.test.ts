/**
 * The audit log, in process: one line per call with how it ended, whatever ended it. A tool call that ran, one
 * refused before it ran (a tool the session has not or may not use, arguments its schema refuses, a handle that
 * names nothing), the built-in tools, prompts/get and resources/read: each gets a line of the same shape, with its
 * arguments only when `audit.arguments` asks for them, and never a token. The real core behind its HTTP edge, a
 * real SDK server in process as the upstream.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, test } from "vitest";
import { createToolpacks, type Toolpacks } from "../../src/index.js";
import { call2025, catalogOf, initialize, modern, post } from "../helpers/in-process.js";

/** An upstream with tools (echo, add with a schema, big: a result over the capture bound), a prompt and a resource. */
function upstream() {
  const server = new Server(
    { name: "audited", version: "1.0.0" },
    { capabilities: { tools: {}, prompts: {}, resources: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [
      { name: "echo", inputSchema: { type: "object", properties: { text: { type: "string" } } } },
      {
        name: "add",
        inputSchema: {
          type: "object",
          properties: { a: { type: "number" }, b: { type: "number" } },
          required: ["a", "b"],
        },
      },
      { name: "secret_op", inputSchema: { type: "object" } },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, (r) => {
    const args = (r.params.arguments ?? {}) as Record<string, unknown>;
    if (r.params.name === "add")
      return { content: [{ type: "text", text: String(Number(args.a) + Number(args.b)) }] };
    return { content: [{ type: "text", text: String(args.text ?? "x").repeat(50) }] };
  });
  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: [{ name: "greet" }] }));
  server.setRequestHandler(GetPromptRequestSchema, () => ({
    messages: [{ role: "user", content: { type: "text", text: "hello" } }],
  }));
  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: [{ uri: "memo://note", name: "note" }],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, (r) => ({
    contents: [{ uri: r.params.uri, text: "a note" }],
  }));
  const [ours, theirs] = InMemoryTransport.createLinkedPair();
  void server.connect(theirs);
  return ours;
}

const ENV = { ALICE: "alice-token-for-audit-tests", ROOT: "root-token-for-audit-tests" };
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

const config = (file: string, extra = "") => `
auth:
  tokens:
    - { token: "\${ALICE}", subject: alice, scopes: [mcp] }
    - { token: "\${ROOT}", subject: root, scopes: [admin] }
audit: { file: ${JSON.stringify(file)}${extra} }
upstreams:
  up: { command: in-process }
toolsets:
  main:
    tools: [up/echo, up/add]
    prompts: [up/greet]
    resources: [up/memo://note]
    capture: { over_bytes: 64 }
  admin:
    requires: { scopes: [admin] }
    tools: [up/secret_op]
  later:
    deferred: true
    tools: [up/echo]
`;

const dirs: string[] = [];
const open: Toolpacks[] = [];
afterEach(async () => {
  for (const tp of open.splice(0)) await tp.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function served(extra = "") {
  const dir = mkdtempSync(join(tmpdir(), "toolpacks-audit-"));
  dirs.push(dir);
  const file = join(dir, "audit.jsonl");
  const toolpacks = createToolpacks(catalogOf(config(file, extra), ENV), {
    logger: false,
    upstreamTransport: () => upstream(),
  });
  open.push(toolpacks);
  /** The audit lines written so far (the log is flushed by closing). */
  const lines = async () => {
    await toolpacks.close();
    return readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  };
  return { toolpacks, lines, file };
}

const alice = { headers: bearer(ENV.ALICE) };

describe("the audit log has a line for every call, with its outcome", () => {
  test("a refused tool call gets a line: unknown, forbidden, bad arguments, a bad handle", async () => {
    const { toolpacks, lines } = served();
    const session = await initialize(toolpacks, { ...alice, query: "only=main,admin" });
    const call = (name: string, args: unknown) => call2025(toolpacks, session, name, args, alice);
    expect((await call("no_such_tool", {})).answer?.error?.code).toBe(-32602);
    // admin's tools are not the caller's: its tool is as unknown to this session as a made-up one.
    expect((await call("secret_op", {})).answer?.error?.code).toBe(-32602);
    expect((await call("add", { a: "one" })).answer?.error?.message).toMatch(/Invalid arguments/);
    expect((await call("echo", { text: "@state:nothing-here" })).answer?.error?.message).toMatch(
      /Unknown or expired handle/,
    );
    expect((await call("add", { a: 1, b: 2 })).answer?.result).toBeDefined();
    const tools = (await lines()).filter((l) => l.method === "tools/call");
    const shape = { subject: "alice", selection: "main", session: expect.any(String) };
    expect(tools).toEqual([
      expect.objectContaining({
        ...shape,
        tool: "no_such_tool",
        toolset: null,
        upstream: null,
        outcome: "refused",
        reason: "unknown_tool",
      }),
      expect.objectContaining({ ...shape, tool: "secret_op", outcome: "refused", reason: "unknown_tool" }),
      expect.objectContaining({
        ...shape,
        tool: "add",
        toolset: "main",
        upstream: "up",
        outcome: "refused",
        reason: "invalid_arguments",
      }),
      expect.objectContaining({
        ...shape,
        tool: "echo",
        toolset: "main",
        outcome: "refused",
        reason: "bad_handle",
      }),
      expect.objectContaining({ ...shape, tool: "add", toolset: "main", upstream: "up", outcome: "ok" }),
    ]);
    for (const l of tools) {
      expect(typeof l.duration_ms).toBe("number");
      expect(typeof l.time).toBe("string");
      // Without audit.arguments, no arguments: not even of a refused call.
      expect(l).not.toHaveProperty("arguments");
    }
  });

  test("prompts/get and resources/read get a line, refused or not", async () => {
    const { toolpacks, lines } = served();
    const session = await initialize(toolpacks, alice);
    const ask = (method: string, params: Record<string, unknown>) =>
      post(toolpacks, { jsonrpc: "2.0", id: 1, method, params }, { ...alice, session });
    expect((await ask("prompts/get", { name: "greet" })).answer?.result).toBeDefined();
    expect((await ask("prompts/get", { name: "nope" })).answer?.error).toBeDefined();
    expect((await ask("resources/read", { uri: "memo://note" })).answer?.result).toBeDefined();
    expect((await ask("resources/read", { uri: "memo://elsewhere" })).answer?.error).toBeDefined();
    const seen = (await lines()).map(({ method, prompt, uri, toolset, upstream, outcome, reason }) => ({
      method,
      ...(prompt !== undefined ? { prompt } : { uri }),
      toolset,
      upstream,
      outcome,
      ...(reason !== undefined ? { reason } : {}),
    }));
    expect(seen).toEqual([
      { method: "prompts/get", prompt: "greet", toolset: "main", upstream: "up", outcome: "ok" },
      {
        method: "prompts/get",
        prompt: "nope",
        toolset: null,
        upstream: null,
        outcome: "refused",
        reason: "unknown_prompt",
      },
      { method: "resources/read", uri: "memo://note", toolset: "main", upstream: "up", outcome: "ok" },
      {
        method: "resources/read",
        uri: "memo://elsewhere",
        toolset: null,
        upstream: null,
        outcome: "refused",
        reason: "unknown_resource",
      },
    ]);
  });

  test("the built-in tools get a line each: list_server_toolsets, find_tools, inspect_state, call_tool as the tool it runs", async () => {
    const { toolpacks, lines } = served();
    const session = await initialize(toolpacks, { ...alice, query: "main&later" });
    const call = (name: string, args: unknown) => call2025(toolpacks, session, name, args, alice);
    expect((await call("list_server_toolsets", {})).answer?.result).toBeDefined();
    expect((await call("find_tools", { query: "echo" })).answer?.result).toBeDefined();
    // A result over the bound is captured: inspect_state reads it; a handle that names nothing is refused.
    const captured = await call("echo", { text: "long" });
    const meta = captured.answer?.result?._meta as { "toolpacks/handle"?: { handle: string } } | undefined;
    const handle = meta?.["toolpacks/handle"]?.handle;
    expect(handle).toBeDefined();
    expect((await call("inspect_state", { handle })).answer?.result).toBeDefined();
    expect((await call("inspect_state", { handle: "@state:nothing-here" })).answer?.error).toBeDefined();
    expect(
      (await call("call_tool", { name: "add", arguments: { a: 1, b: 1 } })).answer?.result,
    ).toBeDefined();
    expect((await call("call_tool", {})).answer?.error).toBeDefined();
    const seen = (await lines()).map(({ tool, toolset, upstream, outcome, reason }) => ({
      tool,
      toolset,
      upstream,
      outcome,
      ...(reason !== undefined ? { reason } : {}),
    }));
    expect(seen).toEqual([
      { tool: "list_server_toolsets", toolset: null, upstream: null, outcome: "ok" },
      { tool: "find_tools", toolset: null, upstream: null, outcome: "ok" },
      { tool: "echo", toolset: "main", upstream: "up", outcome: "ok" },
      { tool: "inspect_state", toolset: null, upstream: null, outcome: "ok" },
      { tool: "inspect_state", toolset: null, upstream: null, outcome: "refused", reason: "bad_handle" },
      // call_tool's line is the tool it ran's, as a direct call's would be; its own refusal is its own.
      { tool: "add", toolset: "main", upstream: "up", outcome: "ok" },
      { tool: "call_tool", toolset: null, upstream: null, outcome: "refused", reason: "invalid_arguments" },
    ]);
  });

  test("a 2026-07-28 refused call gets the same line", async () => {
    const { toolpacks, lines } = served();
    const r = await modern(toolpacks, "tools/call", { name: "no_such_tool", arguments: {} }, alice);
    expect(r.answer?.error?.code).toBe(-32602);
    expect(await lines()).toEqual([
      expect.objectContaining({
        subject: "alice",
        method: "tools/call",
        tool: "no_such_tool",
        outcome: "refused",
        reason: "unknown_tool",
      }),
    ]);
  });

  test("with audit.arguments a refused call's arguments are written as sent; no line holds a token", async () => {
    const { toolpacks, lines, file } = served(", arguments: true");
    const session = await initialize(toolpacks, alice);
    await call2025(toolpacks, session, "add", { a: "one" }, alice);
    await post(
      toolpacks,
      { jsonrpc: "2.0", id: 1, method: "prompts/get", params: { name: "greet", arguments: { who: "x" } } },
      { ...alice, session },
    );
    await post(
      toolpacks,
      { jsonrpc: "2.0", id: 1, method: "resources/read", params: { uri: "memo://note" } },
      { ...alice, session },
    );
    const [refused, prompt, read] = await lines();
    expect(refused).toMatchObject({ tool: "add", outcome: "refused", arguments: { a: "one" } });
    expect(prompt).toMatchObject({ prompt: "greet", outcome: "ok", arguments: { who: "x" } });
    expect(read).not.toHaveProperty("arguments");
    const text = readFileSync(file, "utf8");
    expect(text).not.toContain(ENV.ALICE);
    expect(text).not.toContain(session);
  });
});
