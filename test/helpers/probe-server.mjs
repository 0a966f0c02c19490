#!/usr/bin/env node
// A stdio MCP server that shows what reaches an upstream: with --events-file PATH it appends every JSON-RPC
// message it receives as a JSON line {event: "in", message}. It also serves what the real servers lack:
// `_meta` and unknown fields on prompts, resources and results, levelled logs, and a sampling request that it
// cancels itself.
//
// Tools: echo_meta (returns the request's _meta), log {levels, tag} (one log message per level, filtered by
// logging/setLevel), wait {ms} (until cancelled), sample {prompt} (sampling/createMessage, returns the answer), sample_until_cancelled
// (sampling/createMessage that cancel_sampling aborts), cancel_sampling.
import { appendFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const { values: opts } = parseArgs({
  options: { "events-file": { type: "string" }, name: { type: "string", default: "probe" } },
  strict: true,
});
const record = (fields) => {
  if (opts["events-file"])
    appendFileSync(opts["events-file"], `${JSON.stringify({ t: Date.now(), ...fields })}\n`);
};

const noArgs = { type: "object", properties: {} };
const TOOLS = [
  { name: "echo_meta", description: "Returns the _meta of its request", inputSchema: noArgs },
  {
    name: "log",
    description: "Sends one log message per level given, its data tagged with `tag`",
    inputSchema: {
      type: "object",
      properties: { levels: { type: "array", items: { type: "string" } }, tag: { type: "string" } },
    },
  },
  {
    name: "wait",
    description: "Waits ms milliseconds (default 60000), or until cancelled",
    inputSchema: { type: "object", properties: { ms: { type: "number" } } },
  },
  {
    name: "sample",
    description: "Asks the client to sample",
    inputSchema: { type: "object", properties: { prompt: { type: "string" } } },
  },
  {
    name: "sample_until_cancelled",
    description: "Asks the client to sample, then cancels that request when cancel_sampling is called",
    inputSchema: noArgs,
  },
  {
    name: "cancel_sampling",
    description: "Cancels pending sample_until_cancelled requests",
    inputSchema: noArgs,
  },
  {
    name: "later",
    description:
      "Answers at once; 50 ms later sends a log line tagged `tag`, then asks the client for an elicitation: both tied to no call. The elicitation's outcome is recorded (event later)",
    inputSchema: { type: "object", properties: { tag: { type: "string" } } },
  },
];

const PROMPT = {
  name: "meta_prompt",
  description: "A prompt with _meta and a vendor field",
  _meta: { "x-prompt-meta": 1 },
  "x-vendor": "prompt-tag",
};
const RESOURCE = {
  uri: "probe://meta",
  name: "meta-resource",
  mimeType: "text/plain",
  _meta: { "x-resource-meta": 2 },
  "x-vendor": "resource-tag",
};
const TEMPLATE = {
  uriTemplate: "probe://items/{id}",
  name: "items",
  _meta: { "x-template-meta": 3 },
  "x-vendor": "template-tag",
};

const server = new Server(
  { name: opts.name, version: "1.0.0" },
  {
    capabilities: {
      tools: {},
      prompts: {},
      resources: {},
      logging: {},
      completions: {},
    },
  },
);
const pending = new Set();
const text = (t) => ({ content: [{ type: "text", text: t }] });

server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
  const args = request.params.arguments ?? {};
  switch (request.params.name) {
    case "echo_meta":
      return {
        ...text(JSON.stringify(request.params._meta ?? null)),
        _meta: { "x-result-meta": 4 },
        "x-extra": "result-field",
      };
    case "log":
      for (const level of args.levels ?? []) {
        await server.sendLoggingMessage({ level, logger: "probe", data: `probe ${level} ${args.tag ?? ""}` });
      }
      return text("logged");
    case "wait":
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, args.ms ?? 60_000);
        extra.signal.addEventListener("abort", () => {
          clearTimeout(timer);
          resolve();
        });
      });
      return text(extra.signal.aborted ? "cancelled" : "waited");
    case "sample": {
      const result = await extra.sendRequest(
        {
          method: "sampling/createMessage",
          params: {
            messages: [{ role: "user", content: { type: "text", text: String(args.prompt ?? "") } }],
            maxTokens: 10,
          },
        },
        CreateMessageResultSchema,
      );
      return text(JSON.stringify(result));
    }
    case "sample_until_cancelled": {
      const controller = new AbortController();
      pending.add(controller);
      try {
        await extra.sendRequest(
          {
            method: "sampling/createMessage",
            params: { messages: [{ role: "user", content: { type: "text", text: "wait" } }], maxTokens: 10 },
          },
          CreateMessageResultSchema,
          { signal: controller.signal, timeout: 600_000 },
        );
        return text("answered");
      } catch (error) {
        return text(controller.signal.aborted ? "cancelled" : `failed: ${error?.message ?? error}`);
      } finally {
        pending.delete(controller);
      }
    }
    case "later":
      setTimeout(async () => {
        await server.sendLoggingMessage({
          level: "error",
          logger: "probe",
          data: `probe later ${args.tag ?? ""}`,
        });
        try {
          const answer = await server.request(
            {
              method: "elicitation/create",
              params: {
                message: `later ${args.tag ?? ""}`,
                requestedSchema: { type: "object", properties: { secret: { type: "string" } } },
              },
            },
            ElicitResultSchema,
          );
          record({ event: "later", tag: args.tag, answer });
        } catch (error) {
          record({ event: "later", tag: args.tag, error: error?.message ?? String(error) });
        }
      }, 50);
      return text("later");
    case "cancel_sampling":
      for (const c of pending) c.abort("probe cancelled it");
      return text("ok");
    default:
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
  }
});

server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: [PROMPT] }));
server.setRequestHandler(GetPromptRequestSchema, async () => ({
  messages: [{ role: "user", content: { type: "text", text: "meta prompt" } }],
  _meta: { "x-get-meta": 5 },
  "x-extra": "prompt-result-field",
}));
server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: [RESOURCE] }));
server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: [TEMPLATE] }));
server.setRequestHandler(ReadResourceRequestSchema, async (request) => ({
  contents: [
    { uri: request.params.uri, mimeType: "text/plain", text: "probe", _meta: { "x-content-meta": 6 } },
  ],
  _meta: { "x-read-meta": 7 },
  "x-extra": "read-result-field",
}));
server.setRequestHandler(CompleteRequestSchema, async (request) => ({
  completion: { values: [`${request.params.ref.type}:${request.params.ref.name ?? request.params.ref.uri}`] },
}));

const transport = new StdioServerTransport();
await server.connect(transport);
const deliver = transport.onmessage;
transport.onmessage = (message, extra) => {
  record({ event: "in", message });
  deliver?.(message, extra);
};
process.stdin.on("end", () => process.exit(0));
