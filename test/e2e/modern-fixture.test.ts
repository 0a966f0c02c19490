/**
 * The 2026-07-28 fixture as the SDK v2 client sees it (no toolpacks): both eras on one URL, stdio, the
 * input_required round trips the client fulfils, and the headers it mirrors. What the bridges will rely on.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, expect, test } from "vitest";
import { MODERN_FIXTURE, type ModernServer, startModernServer } from "../helpers/modern.js";
import { ROOT } from "../helpers/proc.js";

let server: ModernServer;
beforeAll(async () => {
  server = await startModernServer();
});
afterAll(async () => {
  await server?.stop();
});

type Mode = "legacy" | "auto";
function client(mode: Mode): Client {
  const c = new Client(
    { name: "fixture-test", version: "1.0.0" },
    {
      capabilities: { elicitation: {}, sampling: {}, roots: {} },
      versionNegotiation: { mode, probe: { timeoutMs: 30_000 } },
    },
  );
  c.setRequestHandler("elicitation/create", async () => ({ action: "accept", content: { ok: true } }));
  c.setRequestHandler("sampling/createMessage", async () => ({
    role: "assistant",
    content: { type: "text", text: "Paris" },
    model: "fake",
  }));
  c.setRequestHandler("roots/list", async () => ({ roots: [{ uri: "file:///work", name: "work" }] }));
  return c;
}

function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? "").join("");
}

test("an auto-mode SDK v2 client lands on 2026-07-28 and fulfils elicitation, sampling and roots in-band", async () => {
  const seen: string[] = [];
  const c = client("auto");
  const fetchSpy: typeof fetch = async (input, init) => {
    const h = new Headers(init?.headers);
    seen.push(`${h.get("mcp-method")} ${h.get("mcp-name") ?? ""} ${h.get("mcp-param-region") ?? ""}`.trim());
    return fetch(input, init);
  };
  await c.connect(new StreamableHTTPClientTransport(new URL(server.url), { fetch: fetchSpy }));
  try {
    expect(c.getProtocolEra()).toBe("modern");
    expect(textOf(await c.callTool({ name: "confirm_action", arguments: { action: "deploy" } }))).toBe(
      "deploy: done",
    );
    expect(textOf(await c.callTool({ name: "summarize", arguments: { text: "long" } }))).toBe(
      "summary: Paris",
    );
    expect(textOf(await c.callTool({ name: "list_roots", arguments: {} }))).toBe("file:///work");
    await c.listTools(); // the client learns regional_echo's x-mcp-header annotation from the list
    expect(
      textOf(await c.callTool({ name: "regional_echo", arguments: { region: "eu-west", text: "hi" } })),
    ).toBe("eu-west: hi");
    const who = await c.callTool({ name: "whoami", arguments: {} });
    expect(who.structuredContent).toMatchObject({
      envelope: { "io.modelcontextprotocol/clientInfo": { name: "fixture-test", version: "1.0.0" } },
    });
  } finally {
    await c.close();
  }
  expect(seen[0]).toBe("server/discover");
  // An input_required answer is retried: the same call goes out twice.
  expect(seen.filter((s) => s === "tools/call confirm_action")).toHaveLength(2);
  expect(seen).toContain("tools/call regional_echo eu-west");
});

test("a default (2025) SDK v2 client is served on the same URL by the stateless legacy leg", async () => {
  const c = client("legacy");
  await c.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  try {
    expect(c.getProtocolEra()).toBe("legacy");
    expect(textOf(await c.callTool({ name: "test_simple_text", arguments: {} }))).toContain("simple text");
    // Stateless legacy HTTP has no return path for server→client requests: the SDK's shim refuses cleanly.
    const refused = await c.callTool({ name: "confirm_action", arguments: { action: "deploy" } });
    expect(refused.isError).toBe(true);
  } finally {
    await c.close();
  }
});

test("over stdio, the auto-mode probe finds 2026-07-28 and a 2025 client gets its elicitation pushed", async () => {
  const transport = () =>
    new StdioClientTransport({
      command: process.execPath,
      args: [MODERN_FIXTURE, "--stdio"],
      cwd: ROOT,
      stderr: "ignore",
    });
  const modern = client("auto");
  await modern.connect(transport());
  try {
    expect(modern.getProtocolEra()).toBe("modern");
    expect(textOf(await modern.callTool({ name: "confirm_action", arguments: { action: "tag" } }))).toBe(
      "tag: done",
    );
  } finally {
    await modern.close();
  }
  const legacy = client("legacy");
  await legacy.connect(transport());
  try {
    expect(legacy.getProtocolEra()).toBe("legacy");
    expect(textOf(await legacy.callTool({ name: "confirm_action", arguments: { action: "tag" } }))).toBe(
      "tag: done",
    );
  } finally {
    await legacy.close();
  }
}, 90_000);

test("a listen stream gets resources/updated and tools/list_changed when the fixture changes them", async () => {
  const c = client("auto");
  await c.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  try {
    const updated = new Promise<string>((ok) =>
      c.setNotificationHandler("notifications/resources/updated", async (n) => ok(n.params.uri)),
    );
    const changed = new Promise<void>((ok) =>
      c.setNotificationHandler("notifications/tools/list_changed", async () => ok()),
    );
    const sub = await c.listen({
      toolsListChanged: true,
      resourceSubscriptions: ["test://watched-resource"],
    });
    expect(sub.honoredFilter).toEqual({
      toolsListChanged: true,
      resourceSubscriptions: ["test://watched-resource"],
    });
    await c.callTool({ name: "touch_resource", arguments: {} });
    expect(await updated).toBe("test://watched-resource");
    await c.callTool({ name: "grow_tools", arguments: {} });
    await changed;
    expect((await c.listTools()).tools.map((t) => t.name)).toContain("grown_1");
    await sub.close();
    expect(await sub.closed).toBe("local");
  } finally {
    await c.close();
  }
});
