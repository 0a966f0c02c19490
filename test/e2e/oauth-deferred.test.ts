/**
 * A deferred toolset of a per-user OAuth upstream that waits for a person, through the real CLI: oidc-provider as
 * the authorization server, the OAuth-protected SDK fixture as the upstream, real SDK clients downstream.
 * call_tool and find_tools meet "authorization required" as a direct call of the tool does (SPEC §11.7, §13).
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  type McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, expect, test } from "vitest";
import {
  type AuthServer,
  authorizeThrough,
  type Protected,
  startAuthServer,
  startProtectedServer,
} from "../helpers/oauth.js";
import { FIXTURE, httpClient, type Served, serve, tempDir, toolNames, until } from "../helpers/proc.js";
import { post } from "../helpers/wire.js";

let as: AuthServer;
let mcp: Protected;
let mcpUrl = "";
let served: Served;
const tmp = tempDir();
const TOKENS = {
  ALICE_TOKEN: "alice-token-3Vx8Nd2Kq",
  BOB_TOKEN: "bob-token-6Gw1Rz4Tm",
  CAROL_TOKEN: "carol-token-8Ls5Yh9Pb",
};
const clients: Client[] = [];

beforeAll(async () => {
  as = await startAuthServer({ resource: () => mcpUrl });
  mcp = await startProtectedServer(as.issuer);
  mcpUrl = mcp.url;
  const file = tmp.file(
    "per-user.yaml",
    `state_dir: ${join(tmp.dir, "state")}
auth:
  tokens: ["\${ALICE_TOKEN}", "\${BOB_TOKEN}", "\${CAROL_TOKEN}"]
upstreams:
  tools:
    url: ${mcpUrl}
    oauth: { mode: per-user }
  main:
    command: node
    args: ["${FIXTURE}", "--tools", "echo"]
toolsets:
  me:
    deferred: true
    tools: [tools/whoami]
  local:
    deferred: true
    tools: [main/echo]
`,
  );
  served = await serve([file], {
    TOOLPACKS_TOKEN_KEY: randomBytes(32).toString("base64"),
    ...TOKENS,
  });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await served?.stop();
  await mcp?.stop();
  await as?.stop();
  tmp.cleanup();
});

async function client(token: string, capabilities = {}): Promise<Client> {
  const c = await httpClient(served.url(), capabilities, { authorization: `Bearer ${token}` });
  clients.push(c);
  return c;
}
const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (e: McpError) => ({ code: e.code, message: e.message, data: e.data }),
  );
type Found = {
  tools: { name: string; toolset: string }[];
  total: number;
  authorization_required?: { toolset: string; upstream: string; url: string }[];
};

test("call_tool of a tool waiting for authorization fails with the -32000, reason and URL of a direct call", async () => {
  const alice = await client(TOKENS.ALICE_TOKEN);
  expect(await toolNames(alice)).toEqual(["find_tools", "call_tool", "list_server_toolsets"]);
  const direct = await failure(alice.callTool({ name: "whoami", arguments: {} }));
  const through = await failure(
    alice.callTool({ name: "call_tool", arguments: { name: "whoami", arguments: {} } }),
  );
  expect(through.code).toBe(-32000);
  expect(through.message).toContain("authorization required: open ");
  expect(through.data).toMatchObject({ reason: "authorization_required", upstream: "tools" });
  const url = new URL((through.data as { url: string }).url);
  expect(`${url.origin}${url.pathname}`).toBe(`${served.base}/oauth/tools/start`);
  expect(through).toEqual(direct);
  // A name no toolset serves is still unknown.
  const unknown = await failure(alice.callTool({ name: "call_tool", arguments: { name: "whoareyou" } }));
  expect(unknown).toMatchObject({
    code: -32602,
    message: expect.stringContaining("Unknown tool: whoareyou"),
  });
});

test("find_tools names a deferred toolset waiting for authorization with its URL, and searching that toolset meets authorization required", async () => {
  const alice = await client(TOKENS.ALICE_TOKEN);
  const found = (await alice.callTool({ name: "find_tools", arguments: { query: "who am i" } }))
    .structuredContent as Found;
  expect(found.tools.map((t) => t.name)).not.toContain("whoami");
  expect(found.authorization_required).toEqual([
    { toolset: "me", upstream: "tools", url: expect.stringContaining(`${served.base}/oauth/tools/start?`) },
  ]);
  const err = await failure(
    alice.callTool({ name: "find_tools", arguments: { query: "whoami", toolset: "me" } }),
  );
  expect(err.code).toBe(-32000);
  expect(err.data).toMatchObject({
    reason: "authorization_required",
    upstream: "tools",
    url: found.authorization_required![0]!.url,
  });
});

test("a 2026-07-28 call_tool of a tool waiting for authorization gets the -32000 naming the URL, and no elicitation", async () => {
  const V = "2026-07-28";
  const res = await post(
    served.url(),
    {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name: "call_tool",
        arguments: { name: "whoami", arguments: {} },
        _meta: {
          "io.modelcontextprotocol/protocolVersion": V,
          "io.modelcontextprotocol/clientCapabilities": { elicitation: { url: {} } },
          "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
        },
      },
    },
    {
      headers: {
        authorization: `Bearer ${TOKENS.ALICE_TOKEN}`,
        "mcp-protocol-version": V,
        "mcp-method": "tools/call",
        "mcp-name": "call_tool",
      },
    },
  );
  expect(res.messages.filter((m) => m.method !== undefined && m.id !== undefined)).toEqual([]);
  const err = res.messages.find((m) => m.id === 1)?.error;
  expect(err?.code).toBe(-32000);
  expect(err?.data).toMatchObject({
    reason: "authorization_required",
    upstream: "tools",
    url: expect.stringContaining(`${served.base}/oauth/tools/start?`),
  });
});

/** A client that declared URL elicitation and, asked, authorizes as `login` in the browser. */
async function consenting(token: string, login: string) {
  const c = await client(token, { elicitation: { url: {} } });
  const asked: { mode?: string; url?: string; elicitationId?: string }[] = [];
  const completed: string[] = [];
  c.setRequestHandler(ElicitRequestSchema, async (req) => {
    const params = req.params as { mode?: string; url?: string; elicitationId?: string };
    asked.push(params);
    expect((await authorizeThrough(params.url!, login)).status).toBe(200);
    return { action: "accept" };
  });
  c.setNotificationHandler(ElicitationCompleteNotificationSchema, async (n) => {
    completed.push(n.params.elicitationId);
  });
  return { c, asked, completed };
}

test("a client with URL elicitation is asked to authorize through call_tool, and the call goes through once it has", async () => {
  const { c, asked, completed } = await consenting(TOKENS.BOB_TOKEN, "bob-at-as");
  const r = await c.callTool({ name: "call_tool", arguments: { name: "whoami", arguments: {} } });
  expect((r.structuredContent as { sub: string }).sub).toBe("bob-at-as");
  expect(asked).toHaveLength(1);
  expect(asked[0]).toMatchObject({ mode: "url", url: expect.stringContaining("/oauth/tools/start?") });
  await until(() => completed.length > 0, "notifications/elicitation/complete");
  expect(completed).toEqual([asked[0]!.elicitationId]);
});

test("a client with URL elicitation that searches a toolset waiting for authorization is asked to authorize, then finds its tools", async () => {
  const { c, asked } = await consenting(TOKENS.CAROL_TOKEN, "carol-at-as");
  const r = await c.callTool({ name: "find_tools", arguments: { query: "whoami", toolset: "me" } });
  expect(asked).toHaveLength(1);
  const found = r.structuredContent as Found;
  expect(found.tools.map((t) => [t.name, t.toolset])).toEqual([["whoami", "me"]]);
  expect(found.authorization_required).toBeUndefined();
});
