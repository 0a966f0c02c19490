/**
 * The real SDK clients (v1 `@modelcontextprotocol/sdk`, v2 `@modelcontextprotocol/client`) complete MCP
 * authorization against `toolpacks serve`: 401 → protected resource metadata → oidc-provider's metadata →
 * dynamic registration → authorization code with PKCE (a user signs in) → token for this audience → tools
 * by the user's claims. And a v2 client steps up when a URL names a toolset its token lacks the scope for.
 */
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { gatedPacks } from "../helpers/identity.js";
import { authorizeAs } from "../helpers/oauth.js";
import { startIssuer, type TestIssuer } from "../helpers/oidc.js";
import { type Served, serve, tempDir } from "../helpers/proc.js";
import { freePort } from "../helpers/redis.js";

const tmp = tempDir();
let as: TestIssuer;
let served: Served;
let audience = "";

beforeAll(async () => {
  as = await startIssuer({
    audience: () => audience,
    accounts: { alice: { groups: ["eng"] }, bob: { groups: ["sales"] } },
  });
  const port = await freePort();
  audience = `http://127.0.0.1:${port}/mcp`;
  const file = tmp.file(
    "packs.yaml",
    gatedPacks({ issuer: as.issuer, audience, oauth: "    step_up: true", adminDefault: false }),
  );
  served = await serve([file, "--port", String(port)]);
});

afterAll(async () => {
  await served?.stop();
  await as?.close();
  tmp.cleanup();
});

/** An interactive client's storage: registration, PKCE verifier, tokens, and where it was sent to sign in. */
class MemoryProvider {
  readonly redirectUrl = "http://127.0.0.1:9/callback";
  readonly clientMetadata = {
    client_name: "toolpacks e2e",
    redirect_uris: [this.redirectUrl],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  };
  information: unknown;
  saved: { access_token: string; scope?: string } | undefined;
  verifier = "";
  authorizationUrl: URL | undefined;
  clientInformation() {
    return this.information as never;
  }
  saveClientInformation(info: unknown) {
    this.information = info;
  }
  tokens() {
    return this.saved as never;
  }
  saveTokens(tokens: { access_token: string; scope?: string }) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

const toolNames = async (c: { listTools(): Promise<{ tools: { name: string }[] }> }) =>
  (await c.listTools()).tools.map((t) => t.name);

describe("SDK v1 client", () => {
  test("completes MCP authorization against toolpacks with oidc-provider and gets the tools its user's claims allow", async () => {
    const url = new URL(served.url("eng"));
    const provider = new MemoryProvider();
    const first = new Client({ name: "v1", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await expect(first.connect(transport)).rejects.toThrow(UnauthorizedError);
    // It found the issuer through toolpacks' metadata and asks for this audience and the advertised scope.
    const authorize = provider.authorizationUrl!;
    expect(authorize.origin).toBe(as.issuer);
    expect(authorize.searchParams.get("resource")).toBe(audience);
    expect(authorize.searchParams.get("scope")).toBe("mcp");
    const callback = await authorizeAs(authorize.href, "alice");
    await transport.finishAuth(callback.searchParams.get("code")!);
    const client = new Client({ name: "v1", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
    expect(await toolNames(client)).toEqual(["echo", "with_meta", "list_server_toolsets"]);
    await client.close();
  });

  test("another user on the same URL does not get the toolset their claims do not meet", async () => {
    const url = new URL(served.url("eng"));
    const provider = new MemoryProvider();
    const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await expect(new Client({ name: "v1", version: "1" }).connect(transport)).rejects.toThrow(
      UnauthorizedError,
    );
    const callback = await authorizeAs(provider.authorizationUrl!.href, "bob");
    await transport.finishAuth(callback.searchParams.get("code")!);
    const client = new Client({ name: "v1", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
    expect(await toolNames(client)).toEqual(["echo", "list_server_toolsets"]);
    await expect(client.callTool({ name: "with_meta", arguments: {} })).rejects.toThrow(/Unknown tool/);
    await client.close();
  });
});

describe("SDK v2 client", () => {
  test("completes MCP authorization against toolpacks with oidc-provider", async () => {
    const url = new URL(served.url("eng"));
    const provider = new MemoryProvider();
    const transport = new TransportV2(url, { authProvider: provider as never });
    await expect(new ClientV2({ name: "v2", version: "1.0.0" }).connect(transport)).rejects.toThrow();
    const authorize = provider.authorizationUrl!;
    expect(authorize.searchParams.get("resource")).toBe(audience);
    const callback = await authorizeAs(authorize.href, "alice");
    await transport.finishAuth(callback.searchParams);
    const client = new ClientV2({ name: "v2", version: "1.0.0" });
    await client.connect(new TransportV2(url, { authProvider: provider as never }));
    expect(await toolNames(client)).toEqual(["echo", "with_meta", "list_server_toolsets"]);
    await client.close();
  });

  test("steps up when the URL names a toolset whose scope the token lacks: 403, a new authorization with the scope, then in", async () => {
    const provider = new MemoryProvider();
    // Signed in first for the bare URL: a token with mcp only.
    const bare = new URL(served.url());
    const t1 = new TransportV2(bare, { authProvider: provider as never });
    await expect(new ClientV2({ name: "v2", version: "1" }).connect(t1)).rejects.toThrow();
    await t1.finishAuth((await authorizeAs(provider.authorizationUrl!.href, "alice")).searchParams);
    expect(provider.saved?.scope).toBe("mcp");
    // ?admin: toolpacks answers 403 insufficient_scope; the client asks the user again, for mcp and admin.
    provider.authorizationUrl = undefined;
    const url = new URL(served.url("admin"));
    const t2 = new TransportV2(url, { authProvider: provider as never });
    await expect(new ClientV2({ name: "v2", version: "1" }).connect(t2)).rejects.toThrow();
    const again = provider.authorizationUrl!;
    // (The v2 client adds offline_access when the issuer offers it.)
    expect(again.searchParams.get("scope")?.split(" ")).toEqual(expect.arrayContaining(["mcp", "admin"]));
    await t2.finishAuth((await authorizeAs(again.href, "alice")).searchParams);
    const client = new ClientV2({ name: "v2", version: "1.0.0" });
    await client.connect(new TransportV2(url, { authProvider: provider as never }));
    expect(await toolNames(client)).toEqual(["echo", "add", "list_server_toolsets"]);
    await client.close();
  });
});
