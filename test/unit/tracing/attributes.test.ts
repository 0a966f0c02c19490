/** Span names, attributes and error classes after the MCP semantic conventions; when tracing is on at all. */
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, test } from "vitest";
import { SettingError } from "../../../src/config/setting-error.js";
import { outcomeAttributes, requestAttributes, spanName } from "../../../src/tracing/attributes.js";
import { planTracing } from "../../../src/tracing/config.js";
import { createTracing } from "../../../src/tracing/create.js";
import { NOOP_SPAN } from "../../../src/tracing/noop.js";

describe("span names and attributes", () => {
  test.each([
    ["tools/call", "gh_search", "tools/call gh_search"],
    ["prompts/get", "review", "prompts/get review"],
    ["resources/read", undefined, "resources/read"],
    ["initialize", undefined, "initialize"],
  ])("%s with target %s is named %j", (method, target, name) => {
    expect(spanName(method, target)).toBe(name);
  });

  test("a tool call is an execute_tool operation named by its tool; other methods are not", () => {
    expect(requestAttributes("tools/call", "t", {})).toEqual({
      "mcp.method.name": "tools/call",
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "t",
    });
    expect(requestAttributes("prompts/get", "p", {})).toEqual({
      "mcp.method.name": "prompts/get",
      "gen_ai.prompt.name": "p",
    });
    expect(requestAttributes("tools/list", undefined, { requestId: 0 })).toEqual({
      "mcp.method.name": "tools/list",
      "jsonrpc.request.id": "0",
    });
  });

  test.each([
    ["stdio", "pipe"],
    ["http", "tcp"],
  ] as const)("transport %s is network.transport %s", (transport, value) => {
    expect(requestAttributes("ping", undefined, { transport })["network.transport"]).toBe(value);
  });

  test.each([
    [{ result: { content: [] } }, {}, undefined],
    [{ result: { content: [], isError: false } }, {}, undefined],
    [{ result: { content: [], isError: true } }, { "error.type": "tool_error" }, "tool_error"],
    [
      { error: new McpError(-32602, "bad") },
      { "error.type": "-32602", "rpc.response.status_code": "-32602" },
      "MCP error -32602: bad",
    ],
    [{ error: new TypeError("x") }, { "error.type": "TypeError" }, "x"],
    [
      { error: Object.assign(new Error("y"), { name: "StoreUnavailableError" }) },
      { "error.type": "StoreUnavailableError" },
      "y",
    ],
    [{ error: "text" }, { "error.type": "_OTHER" }, "text"],
  ])("outcome %j gives %j", (outcome, attributes, error) => {
    const out = outcomeAttributes(outcome);
    expect(out.attributes).toEqual(attributes);
    expect(out.error).toBe(error);
  });
});

describe("planTracing", () => {
  test.each([
    [undefined, {}, undefined],
    [undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318/" }, "http://c:4318/v1/traces"],
    [undefined, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c:4318/custom" }, "http://c:4318/custom"],
    [
      { endpoint: "https://c/otlp" },
      { OTEL_EXPORTER_OTLP_ENDPOINT: "http://env:4318" },
      "https://c/otlp/v1/traces",
    ],
    [{ endpoint: "http://c:4318/v1/traces" }, {}, "http://c:4318/v1/traces"],
    [{ endpoint: "http://c:4318" }, { OTEL_SDK_DISABLED: "true" }, undefined],
  ])("config %j with env %j exports to %s", (config, env, url) => {
    expect(planTracing(config, env)?.url).toBe(url);
  });

  test("the service name comes from the setting, then OTEL_SERVICE_NAME, then toolpacks", () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SERVICE_NAME: "gw" };
    expect(planTracing({ service_name: "mine" }, env)?.serviceName).toBe("mine");
    expect(planTracing(undefined, env)?.serviceName).toBe("gw");
    expect(planTracing({ endpoint: "http://c" }, {})).toMatchObject({
      serviceName: "toolpacks",
      sampleRatio: 1,
    });
  });

  test.each([
    [{ endpoint: "collector:4318" }, "tracing.endpoint"],
    [{ endpoint: "http://c", sample_ratio: 1.5 }, "tracing.sample_ratio"],
  ])("%j is refused at %s", (config, path) => {
    expect(() => planTracing(config, {})).toThrow(SettingError);
    expect(() => planTracing(config, {})).toThrow(path);
  });

  test("off, tracing hands out one shared no-op span that leaves _meta as it was", async () => {
    const t = await createTracing(undefined, { env: {} });
    const meta = { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" };
    const span = t.serverSpan("tools/call", "x", {}, meta);
    expect(t.enabled).toBe(false);
    expect(span).toBe(NOOP_SPAN);
    expect(t.clientSpan(span, "tools/call", "y", {}).inject(meta)).toEqual({
      traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    });
  });
});
