/**
 * Upstream tools exposed as find_tools or call_tool beside deferred toolsets, through the real CLI with real SDK
 * clients: a deferred one never takes the built-in's name; a listed one wins it, and the log, list_server_toolsets
 * and `toolpacks check` say so (SPEC §13.1).
 */
import { afterAll, expect, test } from "vitest";
import { FIXTURE, httpClient, runCli, type Served, serve, tempDir, toolNames } from "../helpers/proc.js";

const tmp = tempDir();
const config = tmp.file(
  "packs.yaml",
  `upstreams:
  main:
    command: node
    args: ["${FIXTURE}", "--tools", "echo,add"]
toolsets:
  maths:
    deferred: true
    tools: [main/add]
  phone:
    deferred: true
    tools: [{ tool: main/echo, as: call_tool }]
  dial:
    default: false
    tools: [{ tool: main/echo, as: call_tool }]
  shop:
    default: false
    tools: [{ tool: main/add, as: find_tools }]
`,
);
let served: Served | undefined;
const started = async () => {
  served ??= await serve([config]);
  return served;
};
afterAll(async () => {
  await served?.stop();
  tmp.cleanup();
});
const text = (r: Record<string, unknown>) =>
  (r.content as { text?: string }[]).map((c) => c.text ?? "").join("");

test("a deferred upstream tool named call_tool never takes the built-in's place, and call_tool reaches it by its name", async () => {
  const s = await started();
  const c = await httpClient(s.url());
  try {
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name)).toEqual(["find_tools", "call_tool", "list_server_toolsets"]);
    expect(tools.find((t) => t.name === "call_tool")?.description).toContain("find_tools returned");
    const sum = await c.callTool({
      name: "call_tool",
      arguments: { name: "add", arguments: { a: 2, b: 3 } },
    });
    expect(sum.structuredContent).toEqual({ sum: 5 });
    const rang = await c.callTool({
      name: "call_tool",
      arguments: { name: "call_tool", arguments: { text: "ring" } },
    });
    expect(text(rang)).toBe("ring");
    expect(s.stderr()).not.toMatch(/shadows call_tool/);
  } finally {
    await c.close();
  }
});

test("a listed upstream call_tool wins and the log says the built-in is shadowed, once", async () => {
  const s = await started();
  const c = await httpClient(s.url("dial"));
  try {
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name)).toEqual(["call_tool", "find_tools", "list_server_toolsets"]);
    expect(tools.find((t) => t.name === "find_tools")?.description).not.toContain("run one with call_tool");
    expect(text(await c.callTool({ name: "call_tool", arguments: { text: "hello" } }))).toBe("hello");
    expect(s.stderr()).toMatch(
      /warn .*shadows call_tool beside deferred toolsets: upstream main's tool call_tool takes the name.* upstream=main toolsets=\["dial"\]/,
    );
    const report = (await c.callTool({ name: "list_server_toolsets", arguments: {} })).structuredContent as {
      shadowed?: { name: string; upstream: string; toolsets: string[] }[];
    };
    expect(report.shadowed).toEqual([expect.objectContaining({ name: "call_tool", toolsets: ["dial"] })]);
    // Another selection with the same shadowing: said once per upstream tool, not once per resolution.
    const other = await httpClient(s.url("dial&shop"));
    await other.listTools();
    await other.close();
    expect(s.stderr().match(/shadows call_tool/g)).toHaveLength(1);
  } finally {
    await c.close();
  }
});

test("/toolsets names a listed upstream find_tools that takes the built-in's name", async () => {
  const s = await started();
  const report = (await (await fetch(`${s.base}/toolsets?shop`)).json()) as {
    tools: string[];
    shadowed?: { name: string; detail: string }[];
  };
  expect(report.tools).toEqual(["find_tools", "call_tool", "list_server_toolsets"]);
  expect(report.shadowed).toEqual([
    expect.objectContaining({
      name: "find_tools",
      detail: expect.stringContaining("cannot be searched"),
    }),
  ]);
  const c = await httpClient(s.url("shop"));
  try {
    expect(await toolNames(c)).toEqual(["find_tools", "call_tool", "list_server_toolsets"]);
  } finally {
    await c.close();
  }
});

test("toolpacks check warns of a listed tool exposed as call_tool or find_tools, never of a deferred one", async () => {
  const r = await runCli(["check", config]);
  expect(r.code).toBe(0);
  const warnings = r.stdout.slice(r.stdout.indexOf("\nwarnings:\n"));
  expect(warnings).toMatch(
    /packs\.yaml:\d+:\d+: warning: main\/echo in toolset dial is exposed as "call_tool": .* toolpacks' own call_tool/,
  );
  expect(warnings).toMatch(/main\/add in toolset shop is exposed as "find_tools": .*cannot be searched/);
  expect(warnings).not.toMatch(/toolset phone/);
});
