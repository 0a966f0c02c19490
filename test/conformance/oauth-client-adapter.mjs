#!/usr/bin/env node
// toolpacks' OAuth client (dist/oauth, so `npm run build` first) as a client under test for the client auth
// scenarios of @modelcontextprotocol/conformance 0.2. The runner starts this with the scenario's MCP URL as the
// last argument and MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_PROTOCOL_VERSION and MCP_CONFORMANCE_CONTEXT
// (pre-registered client credentials and their issuer) in the environment. It connects, completes whatever
// authorization the server asks for, lists the tools and calls `test-tool`; exit 0 when all of that worked.
// Protocol versions up to 2025-11-25 use the initialize handshake (SDK client); 2026-07-28 is stateless.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { OAuthClient } from "../../dist/oauth/client.js";
import { withUpstreamAuth } from "../../dist/oauth/fetch.js";
import { MemoryTokenStore } from "../../dist/oauth/store/memory.js";

const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const version = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION ?? "2025-11-25";
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}");
const stateless = version >= "2026-07-28";

/** The runner's fixed CIMD URL: its AS accepts it as a client_id without fetching it. */
const CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json";

const oauth = {
  mode: "shared",
  grant: scenario.startsWith("auth/client-credentials") ? "client_credentials" : "authorization_code",
  client_metadata_url: CLIENT_METADATA_URL,
  ...(context.client_id ? { client_id: context.client_id } : {}),
  ...(context.client_secret ? { client_secret: context.client_secret } : {}),
  ...(context.issuer && context.client_id ? { issuer: context.issuer } : {}),
};
const upstream = { name: "conformance", url, oauth };
const client = new OAuthClient({
  store: new MemoryTokenStore(),
  upstream: (name) => (name === upstream.name ? upstream : undefined),
  redirectUri: "http://localhost:3000/callback",
});

/** The user agent: the runner's AS redirects at once with a code; hand the redirect to the OAuth client. */
async function authorize(authorizeUrl) {
  const res = await fetch(authorizeUrl, { redirect: "manual" });
  const location = res.headers.get("location");
  if (!location) throw new Error(`the authorization endpoint answered ${res.status} without a redirect`);
  await client.complete(new URL(location).searchParams);
}

const authed = withUpstreamAuth(client.auth(upstream.name), (u, i) => fetch(u, i), { authorize });

let nextId = 1;
async function statelessRequest(method, params = {}) {
  const res = await authed(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": version,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: nextId++,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": version,
          "io.modelcontextprotocol/clientInfo": { name: "toolpacks-oauth-adapter", version: "1.0.0" },
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    }),
  });
  const body = await res.json().catch(() => ({}));
  if (!res.ok || body.error)
    throw new Error(`${method}: HTTP ${res.status} ${JSON.stringify(body.error ?? body)}`);
  return body.result;
}

async function run() {
  if (stateless) {
    const list = await statelessRequest("tools/list");
    if (list.tools?.some((t) => t.name === "test-tool"))
      await statelessRequest("tools/call", { name: "test-tool", arguments: {} });
    return;
  }
  const mcp = new Client({ name: "toolpacks-oauth-adapter", version: "1.0.0" }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: authed });
  await mcp.connect(transport);
  const { tools } = await mcp.listTools();
  if (tools.some((t) => t.name === "test-tool")) await mcp.callTool({ name: "test-tool", arguments: {} });
  await transport.close();
}

try {
  await run();
  process.exit(0);
} catch (err) {
  process.stderr.write(`${err?.name ?? "Error"}: ${err?.message ?? err}\n`);
  process.exit(1);
}
