/**
 * A 2026-07-28 upstream behind `toolpacks serve`, used by a plain 2025 client (SDK v1): the upstream is spoken to
 * statelessly (no initialize, an envelope on every request), and the client sees a 2025 server as before —
 * tools, prompts, resources, progress, cancellation, log lines at the level it set, list changes and resource
 * updates (which reach toolpacks on the upstream's subscriptions/listen stream). Over HTTP and over stdio.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { MODERN_FIXTURE, type ModernServer, startModernServer } from "../helpers/modern.js";
import { httpClient, type Served, serve, tempDir, toolNames, until } from "../helpers/proc.js";

const textOf = (r: unknown) =>
  ((r as { content?: { text?: string }[] }).content ?? []).map((c) => c.text ?? "").join("");

describe.each(["http", "stdio"] as const)("a 2026-07-28 upstream over %s", (transport) => {
  const tmp = tempDir();
  const events = join(tmp.dir, "events.jsonl");
  let upstream: ModernServer | undefined;
  let served: Served;
  let client: Client;
  const notes: { method: string; params?: Record<string, unknown> }[] = [];

  beforeAll(async () => {
    let spec: string;
    if (transport === "http") {
      upstream = await startModernServer(["--events", events]);
      spec = `url: ${upstream.url}`;
    } else {
      spec = `command: ${process.execPath}\n    args: [${MODERN_FIXTURE}, --stdio, --events, ${events}]`;
    }
    const config = tmp.file("packs.yaml", `name: modern-bridge\nupstreams:\n  m:\n    ${spec}\n`);
    served = await serve([config]);
    client = await httpClient(served.url());
    for (const schema of [
      LoggingMessageNotificationSchema,
      ResourceUpdatedNotificationSchema,
      ToolListChangedNotificationSchema,
    ]) {
      client.setNotificationHandler(schema, (n) => {
        notes.push(n as (typeof notes)[number]);
      });
    }
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await served?.stop();
    await upstream?.stop();
    tmp.cleanup();
  });

  test("its tools are listed and called, with the 2025 client's own capabilities and info in the envelope", async () => {
    expect(await toolNames(client)).toEqual(expect.arrayContaining(["whoami", "regional_echo", "slow"]));
    const result = await client.callTool({ name: "whoami", arguments: {} });
    const envelope = (result.structuredContent as { envelope: Record<string, unknown> }).envelope;
    expect(envelope["io.modelcontextprotocol/protocolVersion"]).toBe("2026-07-28");
    // The upstream asks only for what this client can do (B4, SPEC §12.4).
    expect(envelope["io.modelcontextprotocol/clientInfo"]).toEqual({ name: "e2e", version: "1.0.0" });
    expect(envelope["io.modelcontextprotocol/clientCapabilities"]).toEqual({});
    expect(
      textOf(await client.callTool({ name: "regional_echo", arguments: { region: "eu", text: "hi" } })),
    ).toBe("eu: hi");
  });

  test.runIf(transport === "stdio")(
    "serve asks its era of the process it spawned at start, which then serves: one process, probed once",
    () => {
      const seen = new Map<number, string[]>();
      for (const line of readFileSync(events, "utf8").split("\n").filter(Boolean)) {
        const e = JSON.parse(line) as { pid: number; event: string; method?: string };
        if (e.event === "message") seen.set(e.pid, [...(seen.get(e.pid) ?? []), e.method!]);
      }
      expect(seen.size).toBe(1);
      const [methods] = [...seen.values()];
      expect(methods![0]).toBe("server/discover");
      expect(methods!.filter((m) => m === "server/discover")).toHaveLength(1);
      expect(methods).toContain("tools/list");
    },
  );

  test("its prompts and resources are listed, got and read", async () => {
    const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
    expect(prompts).toContain("test_prompt_with_arguments");
    const prompt = await client.getPrompt({
      name: "test_prompt_with_arguments",
      arguments: { arg1: "a", arg2: "b" },
    });
    expect(JSON.stringify(prompt.messages)).toContain("arg1='a', arg2='b'");
    const resources = (await client.listResources()).resources.map((r) => r.uri);
    expect(resources).toContain("test://static-text");
    const read = await client.readResource({ uri: "test://static-text" });
    expect(read.contents[0]).toMatchObject({ text: "This is the content of the static text resource." });
    const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
    expect(templates).toContain("test://template/{id}/data");
  });

  test("progress comes back under the client's token", async () => {
    const progress: number[] = [];
    const result = await client.callTool({ name: "slow", arguments: { ms: 200, steps: 2 } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    expect(textOf(result)).toBe("slept 200 ms");
    expect(progress).toEqual([1, 2]);
  });

  /** Calls the upstream received so far (HTTP: POSTs of tools/call; stdio: tools/call messages). */
  const calls = () =>
    readFileSync(events, "utf8")
      .split("\n")
      .filter((l) => l.includes('"mcp-method":"tools/call"') || l.includes('"method":"tools/call"')).length;

  test("a cancelled call is cancelled upstream", async () => {
    const controller = new AbortController();
    const before = calls();
    const call = client.callTool({ name: "slow", arguments: { ms: 60_000 } }, undefined, {
      signal: controller.signal,
    });
    await until(() => calls() > before, "the call upstream");
    controller.abort("changed my mind");
    await expect(call).rejects.toThrow();
    await until(() => readFileSync(events, "utf8").includes("slow-cancelled"), "the upstream's cancellation");
  });

  test("log lines reach the client as from a 2025 upstream, at the level it set", async () => {
    notes.length = 0;
    await client.setLoggingLevel("info");
    await client.callTool({ name: "test_tool_with_logging", arguments: {} });
    const lines = notes.filter((n) => n.method === "notifications/message").map((n) => n.params?.data);
    expect(lines).toEqual([
      "Tool execution started",
      "Tool execution processing data",
      "Tool execution completed",
    ]);
  });

  test("a resource update and a tool list change reach the client through the upstream's listen stream", async () => {
    notes.length = 0;
    await client.subscribeResource({ uri: "test://watched-resource" });
    await client.callTool({ name: "touch_resource", arguments: {} });
    await until(
      () => notes.find((n) => n.method === "notifications/resources/updated"),
      "notifications/resources/updated",
    );
    expect(notes.find((n) => n.method === "notifications/resources/updated")?.params).toEqual({
      uri: "test://watched-resource",
    });
    const before = await toolNames(client);
    const grown = textOf(await client.callTool({ name: "grow_tools", arguments: {} })).replace("added ", "");
    await until(
      () => notes.find((n) => n.method === "notifications/tools/list_changed"),
      "tools/list_changed",
    );
    const after = await toolNames(client);
    expect(before).not.toContain(grown);
    expect(after).toContain(grown);
  });

  test("a 2025 client is asked the upstream's input_required as server→client requests, and gets the result (B4)", async () => {
    const asker = await httpClient(served.url(), { elicitation: { form: {} }, sampling: {} });
    const asked: string[] = [];
    try {
      asker.setRequestHandler(ElicitRequestSchema, async (r) => {
        asked.push(`elicitation: ${r.params.message}`);
        return { action: "accept", content: { ok: true } };
      });
      asker.setRequestHandler(CreateMessageRequestSchema, async () => {
        asked.push("sampling");
        return { role: "assistant", model: "m", content: { type: "text", text: "short" } };
      });
      const done = await asker.callTool({ name: "confirm_action", arguments: { action: "deploy" } });
      expect(textOf(done)).toBe("deploy: done");
      // An ordinary 2025 result: nothing of the 2026-07-28 wire is left on it.
      expect(done).not.toHaveProperty("resultType");
      expect(textOf(await asker.callTool({ name: "summarize", arguments: { text: "long" } }))).toBe(
        "summary: short",
      );
      expect(asked).toEqual(["elicitation: Really deploy?", "sampling"]);
    } finally {
      await asker.close();
    }
  });

  test("a 2025 client without the capability a call needs is refused with -32021 naming it, never asked (B4)", async () => {
    // Its envelope declares what it can do, so the upstream refuses before asking.
    const refused = await client
      .callTool({ name: "confirm_action", arguments: { action: "deploy" } })
      .catch((err: { code?: number; data?: unknown }) => err);
    expect(refused).toMatchObject({ code: -32021, data: { requiredCapabilities: { elicitation: {} } } });
  });
});
