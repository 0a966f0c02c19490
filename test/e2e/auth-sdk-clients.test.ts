/** Real SDK clients (v1 and v2) against a resource server gated by src/auth, tokens from a real oidc-provider. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  ClientCredentialsProvider as ClientCredentialsV2,
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";
import { ClientCredentialsProvider } from "@modelcontextprotocol/sdk/client/auth-extensions.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  type Authenticator,
  createAuthenticator,
  type Principal,
  type Requires,
} from "../../src/auth/index.js";
import { CLIENT_SECRET, startIssuer, type TestIssuer } from "../helpers/oidc.js";

/** `?notes` asks for a toolset that needs notes:write; the bare URL needs nothing beyond a valid token. */
const NOTES: Requires = { scopes: ["notes:write"] };

let as: TestIssuer;
let server: Server;
let base: string;
let auth: Authenticator;
const seen: { status: number; challenge?: string }[] = [];

function mcpServer(principal: Principal): McpServer {
  const s = new McpServer({ name: "gated", version: "1.0.0" });
  s.registerTool("whoami", { description: "the caller's scopes" }, async () => ({
    content: [
      { type: "text", text: principal.scopes === "all" ? "all" : [...principal.scopes].sort().join(" ") },
    ],
  }));
  return s;
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", base);
  if (req.method === "GET" && auth.metadataPaths.includes(url.pathname)) {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(auth.metadata()));
    return;
  }
  if (url.pathname !== "/mcp") {
    res.writeHead(404).end();
    return;
  }
  const needed = url.searchParams.has("notes") ? [NOTES] : [];
  const r = await auth.authenticate(req.headers);
  const denial = r.ok && auth.stepUp ? auth.insufficientScope(r.principal, needed) : undefined;
  const failure = r.ok ? denial : r;
  if (failure) {
    const challenge = failure.status === 503 ? undefined : failure.wwwAuthenticate;
    seen.push({ status: failure.status, ...(challenge ? { challenge } : {}) });
    res.writeHead(failure.status, challenge ? { "www-authenticate": challenge } : {}).end();
    return;
  }
  if (!r.ok) return;
  // Stateless: one server and transport per request, as the SDK does it.
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  const s = mcpServer(r.principal);
  res.on("close", () => void s.close());
  await s.connect(transport);
  await transport.handleRequest(req, res);
}

beforeAll(async () => {
  server = createServer((req, res) => {
    handle(req, res).catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  as = await startIssuer({ audience: `${base}/mcp` });
  auth = createAuthenticator({
    oauth: { issuer: as.issuer, audience: `${base}/mcp`, scopes_supported: ["mcp"], step_up: true },
  });
});

afterAll(async () => {
  auth?.close();
  server?.closeAllConnections();
  await new Promise<void>((ok) => (server ? server.close(() => ok()) : ok()));
  await as?.close();
});

const whoami = async (client: { callTool(p: { name: string }): Promise<unknown> }) =>
  ((await client.callTool({ name: "whoami" })) as { content: { text: string }[] }).content[0]!.text;

/** A connected client of each SDK generation, authorizing itself with client credentials. */
async function connectV2(query: string, provider = v2Credentials()) {
  const client = new ClientV2({ name: "v2", version: "1.0.0" });
  await client.connect(new TransportV2(new URL(`${base}/mcp${query}`), { authProvider: provider }));
  return client;
}
const v2Credentials = () =>
  new ClientCredentialsV2({ clientId: "jwt", clientSecret: CLIENT_SECRET, expectedIssuer: as.issuer });

async function connectV1(query: string, scope: string) {
  const provider = new ClientCredentialsProvider({
    clientId: "jwt",
    clientSecret: CLIENT_SECRET,
    expectedIssuer: as.issuer,
    scope,
  });
  const client = new Client({ name: "v1", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp${query}`), { authProvider: provider }),
  );
  return client;
}

describe("SDK v2 client", () => {
  test("follows the 401 to the protected resource metadata and gets a token for this audience", async () => {
    const client = await connectV2("");
    expect(await whoami(client)).toBe("mcp");
    await client.close();
  });

  test("steps up on 403 insufficient_scope: it asks for the challenged scopes and keeps the ones it had", async () => {
    const provider = v2Credentials();
    await (await connectV2("", provider)).close();
    seen.length = 0;
    const client = await connectV2("?notes", provider);
    expect(seen.map((s) => s.status)).toEqual([403]);
    expect(seen[0]!.challenge).toContain('scope="mcp notes:write"');
    expect(await whoami(client)).toBe("mcp notes:write");
    await client.close();
  });
});

describe("SDK v1 client", () => {
  test("follows the 401 to the protected resource metadata and gets a token for this audience", async () => {
    const client = await connectV1("", "mcp");
    expect(await whoami(client)).toBe("mcp");
    await client.close();
  });

  test("a v1 client_credentials client cannot step up: it asks again for its own scope and stops at the same 403", async () => {
    seen.length = 0;
    await expect(connectV1("?notes", "mcp")).rejects.toThrow(/403 after trying upscoping/);
    expect(seen.map((s) => s.status)).toEqual([401, 403, 403]);
    // Configured with the scope up front, the same client gets in.
    const ok = await connectV1("?notes", "mcp notes:write");
    expect(await whoami(ok)).toBe("mcp notes:write");
    await ok.close();
  });
});
