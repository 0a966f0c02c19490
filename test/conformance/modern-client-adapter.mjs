#!/usr/bin/env node
// toolpacks as the MCP client under test for the client scenarios of @modelcontextprotocol/conformance 0.2
// (`tools_call`, `request-metadata`, the SEP-2243 header ones, ...). The runner starts this with the scenario's
// server URL as the last argument (MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_PROTOCOL_VERSION and, for some,
// MCP_CONFORMANCE_CONTEXT in the environment). It writes a packs.yaml whose one upstream is that URL (`protocol:
// auto`: toolpacks probes the era as it always does), runs `toolpacks serve --transport stdio` on it (dist/cli.js,
// so `npm run build` first) and, as a plain 2025 client (SDK v1), lists the tools, prompts and resources and uses
// each: the tool calls the context names, or every listed tool with arguments made from its schema (a tool
// toolpacks dropped cannot be called); every prompt got, every resource read. Exit 0 when the session and the
// lists worked; a call the server refuses is printed, not fatal (the scenario's checks judge).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}");
const log = (line) => process.stderr.write(`${scenario}: ${line}\n`);

/** Arguments a scenario expects for a tool (beyond what its schema requires). */
const KNOWN = { add_numbers: { a: 2, b: 3 } };

/** A value of a JSON Schema's type, for a required argument nobody named. */
function sample(schema) {
  const type = Array.isArray(schema?.type) ? schema.type[0] : schema?.type;
  return { integer: 1, number: 1, boolean: true, object: {}, array: [], null: null }[type] ?? "x";
}

function argumentsFor(tool, tools) {
  if (KNOWN[tool.name]) return KNOWN[tool.name];
  // json-schema-2020-12-preservation: the focal tool's inputSchema, as toolpacks listed it, echoed back.
  if (tool.name === "json_schema_echo") {
    const focal = tools.find((t) => t.name === "json_schema_2020_12_tool");
    if (focal) return { schema: focal.inputSchema };
  }
  const schema = tool.inputSchema ?? {};
  const out = {};
  for (const key of schema.required ?? []) out[key] = sample(schema.properties?.[key]);
  return out;
}

// http-custom-headers calls with a null for a boolean parameter (the header must then be left out): toolpacks
// would refuse those arguments against the schema, so that scenario's upstream is not validated here.
const validate = scenario === "http-custom-headers" ? "\n    validate_arguments: false" : "";
const dir = mkdtempSync(path.join(tmpdir(), "toolpacks-conformance-client-"));
const config = path.join(dir, "packs.yaml");
writeFileSync(
  config,
  `name: toolpacks-conformance\nupstreams:\n  scenario:\n    url: ${JSON.stringify(url)}${validate}\n`,
);

const transport = new StdioClientTransport({
  command: process.execPath,
  args: [path.join(root, "dist/cli.js"), "serve", "--transport", "stdio", "--no-toolsets-tool", config],
  env: { ...process.env, TOOLPACKS_LOG_LEVEL: process.env.TOOLPACKS_LOG_LEVEL ?? "warn" },
  stderr: "inherit",
});
// It can answer a form elicitation (accepting), which a bridge may ask of it for an upstream's input_required.
const client = new Client(
  { name: "toolpacks-conformance-adapter", version: "1.0.0" },
  { capabilities: { elicitation: {} } },
);
client.setRequestHandler(ElicitRequestSchema, async () => ({
  action: "accept",
  content: { confirmed: true },
}));
const attempt = async (what, run) => {
  try {
    log(`${what}: ${JSON.stringify(await run()).slice(0, 200)}`);
  } catch (err) {
    log(`${what} failed: ${err instanceof Error ? err.message : String(err)}`);
  }
};

let code = 0;
try {
  await client.connect(transport);
  const caps = client.getServerCapabilities() ?? {};
  const { tools } = await client.listTools();
  log(`${tools.length} tool(s): ${tools.map((t) => t.name).join(", ")}`);
  const calls = context.toolCalls ?? tools.map((t) => ({ name: t.name, arguments: argumentsFor(t, tools) }));
  for (const call of calls) await attempt(`call ${call.name}`, () => client.callTool(call));
  if (caps.prompts) {
    for (const prompt of (await client.listPrompts()).prompts) {
      const args = Object.fromEntries(
        (prompt.arguments ?? []).filter((a) => a.required).map((a) => [a.name, "x"]),
      );
      await attempt(`get ${prompt.name}`, () => client.getPrompt({ name: prompt.name, arguments: args }));
    }
  }
  if (caps.resources) {
    for (const resource of (await client.listResources()).resources)
      await attempt(`read ${resource.uri}`, () => client.readResource({ uri: resource.uri }));
  }
} catch (err) {
  log(err instanceof Error ? err.message : String(err));
  code = 1;
} finally {
  await client.close().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
}
process.exit(code);
