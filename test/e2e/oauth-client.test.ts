/**
 * toolpacks as an OAuth client, end to end against real parts: oidc-provider as the authorization server and an
 * SDK MCP server that accepts only its JWT access tokens for its own resource URL.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { OAuthClient } from "../../src/oauth/client.js";
import { OAuthFlowError } from "../../src/oauth/errors.js";
import { AuthorizationRequired, withUpstreamAuth } from "../../src/oauth/fetch.js";
import type { Fetch } from "../../src/oauth/http.js";
import { type FlowResponse, oauthRoutes } from "../../src/oauth/routes.js";
import { EncryptedFileTokenStore } from "../../src/oauth/store/file.js";
import { MemoryTokenStore } from "../../src/oauth/store/memory.js";
import { CredentialRecords } from "../../src/oauth/store/records.js";
import { Tickets } from "../../src/oauth/ticket.js";
import type { OAuthUpstream, OAuthUpstreamConfig, TokenStore, UpstreamAuth } from "../../src/oauth/types.js";
import {
  type AuthServer,
  authorizeAs,
  PRE_REGISTERED,
  type Protected,
  startAuthServer,
  startProtectedServer,
} from "../helpers/oauth.js";

let as: AuthServer;
let mcp: Protected;
let mcpUrl = "";

beforeAll(async () => {
  as = await startAuthServer({ resource: () => mcpUrl, accessTokenTTL: 300 });
  mcp = await startProtectedServer(as.issuer);
  mcpUrl = mcp.url;
});
afterAll(async () => {
  await mcp?.stop();
  await as?.stop();
});

interface Call {
  method: string;
  url: string;
  form?: URLSearchParams;
}

/** A fetch that records every request the OAuth client makes (URL without query; form bodies parsed). */
function recording(): { fetch: Fetch; calls: Call[] } {
  const calls: Call[] = [];
  return {
    calls,
    fetch: (url, init) => {
      const u = new URL(String(url));
      const form = init?.body instanceof URLSearchParams ? new URLSearchParams(init.body) : undefined;
      calls.push({
        method: init?.method ?? "GET",
        url: `${u.origin}${u.pathname}`,
        ...(form ? { form } : {}),
      });
      return fetch(url, init);
    },
  };
}

const upstream = (oauth: OAuthUpstreamConfig): OAuthUpstream => ({ name: "tools", url: mcpUrl, oauth });

/** The OAuth client as the CLI and tests use it: authorization URLs straight to the AS, a loopback redirect. */
function directClient(
  oauth: OAuthUpstreamConfig,
  extra: { store?: MemoryTokenStore; now?: () => number; fetch?: Fetch } = {},
) {
  const store = extra.store ?? new MemoryTokenStore();
  const up = upstream(oauth);
  const client = new OAuthClient({
    store,
    upstream: (n) => (n === up.name ? up : undefined),
    redirectUri: "http://127.0.0.1:9/oauth/callback",
    ...(extra.now ? { now: extra.now } : {}),
    ...(extra.fetch ? { fetch: extra.fetch } : {}),
  });
  return { client, store, records: new CredentialRecords(store) };
}

/** An SDK client whose transport carries the UpstreamAuth; `authorize` completes any authorization it meets. */
async function mcpClient(auth: UpstreamAuth, authorize?: (url: string) => Promise<void>): Promise<Client> {
  const c = new Client({ name: "oauth-e2e", version: "1.0.0" });
  const f = withUpstreamAuth(auth, (u, i) => fetch(u, i), authorize ? { authorize } : {});
  await c.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { fetch: f }));
  return c;
}

const whoami = async (c: Client, tool = "whoami") =>
  (await c.callTool({ name: tool, arguments: {} })).structuredContent as {
    sub: string;
    client_id: string;
    scope: string;
  };

describe("authorization code", () => {
  test("an upstream's 401 leads through discovery, dynamic registration and consent to an authorized call", async () => {
    const rec = recording();
    const { client, records } = directClient({ mode: "shared" }, { fetch: rec.fetch });
    const auth = client.auth("tools");
    const seen: string[] = [];
    const c = await mcpClient(auth, async (url) => {
      seen.push(url);
      const callback = await authorizeAs(url, "alice");
      await client.complete(callback.searchParams);
    });
    const me = await whoami(c);
    await c.close();
    expect(me.sub).toBe("alice");
    expect(me.scope).toBe("mcp:tools");
    const q = new URL(seen[0]!).searchParams;
    expect(q.get("code_challenge_method")).toBe("S256");
    expect(q.get("resource")).toBe(mcpUrl);
    expect(q.get("scope")).toBe("mcp:tools offline_access");
    // RFC 8707 on the token request too (oidc-provider would fall back to the granted resource without it).
    const tokenRequests = rec.calls.filter((x) => x.url === `${as.issuer}/token`);
    expect(tokenRequests.map((x) => x.form?.get("grant_type"))).toEqual(["authorization_code"]);
    expect(tokenRequests[0]!.form?.get("resource")).toBe(mcpUrl);
    expect(tokenRequests[0]!.form?.get("code_verifier")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Discovery: the challenge's resource_metadata, then RFC 8414 metadata at the issuer.
    expect(rec.calls.slice(0, 2).map((x) => x.url)).toEqual([
      `${new URL(mcpUrl).origin}/.well-known/oauth-protected-resource/mcp`,
      `${as.issuer}/.well-known/oauth-authorization-server`,
    ]);
    // Discovery went through the AS's metadata and registered once (RFC 7591).
    expect(as.requests.filter((r) => r.method === "POST" && r.path === "/reg").length).toBeGreaterThan(0);
    const grant = await records.grant("tools", "");
    expect(grant?.issuer).toBe(as.issuer);
    expect(grant?.client.source).toBe("registered");
    expect(grant?.refresh_token).toBeTruthy();
    // Registered as what it is: a loopback redirect makes it a native client (OIDC Registration).
    expect((await as.provider.Client.find(grant!.client.client_id))?.applicationType).toBe("native");
  });

  test("a pre-registered client is used as configured and nothing is registered", async () => {
    const before = as.requests.filter((r) => r.path === "/reg").length;
    const { client } = directClient({
      mode: "shared",
      client_id: PRE_REGISTERED.client_id,
      client_secret: PRE_REGISTERED.client_secret,
      issuer: as.issuer,
    });
    const c = await mcpClient(client.auth("tools"), async (url) => {
      await client.complete((await authorizeAs(url, "carol")).searchParams);
    });
    const me = await whoami(c);
    await c.close();
    expect(me).toMatchObject({ sub: "carol", client_id: PRE_REGISTERED.client_id });
    expect(as.requests.filter((r) => r.path === "/reg").length).toBe(before);
  });

  test("a pre-registered client bound to another issuer is never sent to this one", async () => {
    const { client } = directClient({
      mode: "shared",
      client_id: PRE_REGISTERED.client_id,
      client_secret: PRE_REGISTERED.client_secret,
      issuer: "https://elsewhere.example.com",
    });
    const c = new Client({ name: "x", version: "1" });
    const f = withUpstreamAuth(client.auth("tools"), (u, i) => fetch(u, i));
    const err = await c
      .connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { fetch: f }))
      .catch((e) => e);
    expect(err).toBeInstanceOf(OAuthFlowError);
    expect(String(err.message)).toMatch(/belongs to https:\/\/elsewhere.example.com/);
    expect(String(err.message)).not.toContain(PRE_REGISTERED.client_secret);
  });

  test("an access token past its expiry is refreshed first, and the rotated refresh token replaces the old one", async () => {
    let now = Date.now();
    const { client, records } = directClient({ mode: "shared" }, { now: () => now });
    const c = await mcpClient(client.auth("tools"), async (url) => {
      await client.complete((await authorizeAs(url)).searchParams);
    });
    await whoami(c);
    const first = (await records.grant("tools", ""))!;
    now = first.expires_at! + 1; // the client's clock passes the token's expiry
    await whoami(c);
    const second = (await records.grant("tools", ""))!;
    await c.close();
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.refresh_token).toBeTruthy();
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.obtained_at).toBe(now);
  });

  test("a token the upstream refuses is refreshed once and the request retried", async () => {
    const { client, store, records } = directClient({ mode: "shared" });
    const c = await mcpClient(client.auth("tools"), async (url) => {
      await client.complete((await authorizeAs(url)).searchParams);
    });
    await whoami(c);
    await c.close();
    const good = (await records.grant("tools", ""))!;
    await records.putGrant("tools", "", { ...good, access_token: "revoked-or-expired" });
    // A new process on the same store: its first request carries the refused token.
    const restarted = directClient({ mode: "shared" }, { store }).client;
    const again = await mcpClient(restarted.auth("tools"));
    const me = await whoami(again);
    await again.close();
    const after = (await records.grant("tools", ""))!;
    expect(me.sub).toBe("alice");
    expect(after.access_token).not.toBe("revoked-or-expired");
    expect(after.refresh_token).not.toBe(good.refresh_token);
  });

  test("a grant stored by another process is used at the next 401, without a new authorization", async () => {
    const store = new MemoryTokenStore();
    const rec = recording();
    const waiting = directClient({ mode: "shared" }, { store, fetch: rec.fetch }).client;
    expect(await waiting.auth("tools").headers()).toEqual({}); // it has looked, and found nothing
    const other = directClient({ mode: "shared" }, { store }).client;
    const c1 = await mcpClient(other.auth("tools"), async (url) => {
      await other.complete((await authorizeAs(url, "dave")).searchParams);
    });
    await c1.close();
    const c2 = await mcpClient(waiting.auth("tools"));
    expect((await whoami(c2)).sub).toBe("dave");
    await c2.close();
    // Its request went out without a token; the stored grant is simply taken, not refreshed or dropped.
    expect(rec.calls.filter((x) => x.form?.get("grant_type") === "refresh_token")).toEqual([]);
  });

  test("a 403 insufficient_scope steps up with the union of the scopes held and the scopes asked", async () => {
    const { client } = directClient({ mode: "shared" });
    const urls: string[] = [];
    const c = await mcpClient(client.auth("tools"), async (url) => {
      urls.push(url);
      await client.complete((await authorizeAs(url)).searchParams);
    });
    await whoami(c);
    const admin = await whoami(c, "admin");
    await c.close();
    expect(urls).toHaveLength(2);
    expect(new URL(urls[1]!).searchParams.get("scope")?.split(" ").sort()).toEqual([
      "mcp:admin",
      "mcp:tools",
      "offline_access",
    ]);
    expect(admin.scope.split(" ").sort()).toEqual(["mcp:admin", "mcp:tools"]);
  });

  test("a step-up the upstream keeps refusing is retried once, then given up with an error", async () => {
    const { client } = directClient({ mode: "shared" });
    let authorizations = 0;
    const c = await mcpClient(client.auth("tools"), async (url) => {
      authorizations++;
      await client.complete((await authorizeAs(url)).searchParams);
    });
    const err = await c.callTool({ name: "never", arguments: {} }).catch((e) => e);
    await c.close();
    expect(err).toBeInstanceOf(OAuthFlowError);
    expect(err.code).toBe("retry-limit");
    // The first authorization (tools/list at connect), one for mcp:admin, one retry of it: no more.
    expect(authorizations).toBe(3);
  });
});

describe("the authorization response is checked before the code is redeemed", () => {
  async function started() {
    const rec = recording();
    const { client } = directClient({ mode: "shared" }, { fetch: rec.fetch });
    const auth = client.auth("tools");
    const f = withUpstreamAuth(auth, (u, i) => fetch(u, i));
    const err = await new Client({ name: "x", version: "1" })
      .connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { fetch: f }))
      .catch((e) => e);
    expect(err).toBeInstanceOf(AuthorizationRequired);
    const callback = await authorizeAs(err.authorizeUrl);
    const tokenCalls = () => rec.calls.filter((x) => x.method === "POST" && x.url.endsWith("/token")).length;
    return { client, callback, tokenCalls };
  }

  test("an iss naming another issuer is refused (RFC 9207) and the code is never sent", async () => {
    const { client, callback, tokenCalls } = await started();
    expect(callback.searchParams.get("iss")).toBe(as.issuer);
    const code = callback.searchParams.get("code")!;
    callback.searchParams.set("iss", "https://evil.example.com");
    const err = await client.complete(callback.searchParams).catch((e) => e);
    expect(err).toBeInstanceOf(OAuthFlowError);
    expect(err.code).toBe("iss");
    expect(String(err.message)).not.toContain(code);
    expect(tokenCalls()).toBe(0);
  });

  test("a trailing-slash variant of the issuer is a mismatch too (no normalization)", async () => {
    const { client, callback, tokenCalls } = await started();
    callback.searchParams.set("iss", `${as.issuer}/`);
    await expect(client.complete(callback.searchParams)).rejects.toMatchObject({ code: "iss" });
    expect(tokenCalls()).toBe(0);
  });

  test("an iss missing although the AS advertises it is refused", async () => {
    const { client, callback, tokenCalls } = await started();
    callback.searchParams.delete("iss");
    await expect(client.complete(callback.searchParams)).rejects.toMatchObject({ code: "iss" });
    expect(tokenCalls()).toBe(0);
  });

  test("a state that was not issued is refused, and the real one still works once", async () => {
    const { client, callback, tokenCalls } = await started();
    const real = callback.searchParams.get("state")!;
    callback.searchParams.set("state", `${real}x`);
    await expect(client.complete(callback.searchParams)).rejects.toMatchObject({ code: "state" });
    expect(tokenCalls()).toBe(0);
    callback.searchParams.set("state", real);
    await expect(client.complete(callback.searchParams)).resolves.toEqual({
      upstream: "tools",
      principal: "",
    });
    await expect(client.complete(callback.searchParams)).rejects.toMatchObject({ code: "state" });
  });
});

describe("per-user, through the flow endpoints", () => {
  let http: Server;
  let base = "";
  let client: OAuthClient;

  beforeAll(async () => {
    http = createServer();
    await new Promise<void>((ok) => http.listen(0, "127.0.0.1", ok));
    base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    const users = upstream({ mode: "per-user" });
    client = new OAuthClient({ store: new MemoryTokenStore(), upstream: () => users, publicUrl: base });
    const routes = oauthRoutes(client, { publicUrl: base });
    // The HTTP layer's part: it authenticates the principal (here: a header) and mounts the handlers.
    http.on("request", async (req, res) => {
      const principal = req.headers["x-principal"] as string | undefined;
      const r = await routes({
        method: req.method ?? "GET",
        url: req.url ?? "/",
        ...(req.headers.cookie ? { cookie: req.headers.cookie } : {}),
        ...(principal ? { principal } : {}),
      });
      if (!r) return void res.writeHead(404).end();
      res.writeHead(r.status, r.headers as Record<string, string | string[]>).end(r.body);
    });
  });
  afterAll(async () => {
    http.closeAllConnections();
    await new Promise((ok) => http.close(ok));
  });

  /** A principal's browser: opens the start URL, consents at the AS, lands on the callback with its cookie. */
  async function browse(startUrl: string, principal: string, login: string, cookieOverride?: string) {
    const start = await fetch(startUrl, { redirect: "manual", headers: { "x-principal": principal } });
    expect(start.status).toBe(302);
    const cookie = start.headers.getSetCookie()[0]!.split(";")[0]!;
    const callback = await authorizeAs(start.headers.get("location")!, login);
    expect(callback.origin + callback.pathname).toBe(`${base}/oauth/callback`);
    return fetch(callback, { headers: { cookie: cookieOverride ?? cookie } });
  }

  test("each principal authorizes for itself and never gets another's token", async () => {
    const alice = client.auth("tools", "alice");
    const bob = client.auth("tools", "bob");
    const err = await mcpClient(alice).catch((e) => e);
    expect(err).toBeInstanceOf(AuthorizationRequired);
    expect(err.authorizeUrl).toBe(`${base}/oauth/tools/start?scope=mcp%3Atools+offline_access`);
    const done = await browse(err.authorizeUrl, "alice", "alice-at-as");
    expect(done.status).toBe(200);
    expect(await done.text()).toContain("You can close this window");
    const c = await mcpClient(alice);
    expect((await whoami(c)).sub).toBe("alice-at-as");
    await c.close();
    expect(await bob.headers()).toEqual({});
    await expect(mcpClient(bob)).rejects.toBeInstanceOf(AuthorizationRequired);
  });

  test("the start endpoint of a per-user upstream needs a signed-in principal", async () => {
    const res = await fetch(`${base}/oauth/tools/start`, { redirect: "manual" });
    expect(await res.text()).toContain("sign in to toolpacks first");
    expect(res.status).toBe(401);
  });

  test("a callback from a browser that did not start the flow is refused", async () => {
    const res = await browse(`${base}/oauth/tools/start`, "mallory", "victim", "toolpacks_oauth_x=y");
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("started in another browser");
    expect(await client.auth("tools", "mallory").headers()).toEqual({});
  });

  test("a callback with an unknown state gets an error page, not a token", async () => {
    const res = await fetch(
      `${base}/oauth/callback?code=abc&state=forged&iss=${encodeURIComponent(as.issuer)}`,
    );
    expect(res.status).toBe(400);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.text()).toContain("unknown or already used authorization state");
  });
});

test("client_credentials: a machine token is fetched on the first 401 and used", async () => {
  const { client, records } = directClient({
    mode: "shared",
    grant: "client_credentials",
    client_id: PRE_REGISTERED.machine_id,
    client_secret: PRE_REGISTERED.machine_secret,
  });
  const c = await mcpClient(client.auth("tools"));
  const me = await whoami(c);
  await c.close();
  expect(me.client_id).toBe(PRE_REGISTERED.machine_id);
  expect((await records.grant("tools", ""))?.grant).toBe("client_credentials");
});

describe("the start page: a link makes one flow, bounded, and a shared grant only by an administrator", () => {
  const BASE = "http://127.0.0.1:9";
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** The served OAuth client and its pages, in process (the HTTP layer's part is the FlowRequest). */
  function served(oauth: OAuthUpstreamConfig, store: TokenStore = new MemoryTokenStore()) {
    const rec = recording();
    let current = upstream(oauth);
    const tickets = new Tickets(randomBytes(32));
    const client = new OAuthClient({
      store,
      upstream: (n) => (n === current.name ? current : undefined),
      publicUrl: BASE,
      tickets,
      fetch: rec.fetch,
    });
    const routes = oauthRoutes(client, { publicUrl: BASE });
    const go = async (req: Parameters<typeof routes>[0]) => (await routes(req)) as FlowResponse;
    const reconfigure = (next: OAuthUpstreamConfig) => {
      current = upstream(next);
    };
    return { client, tickets, rec, go, reconfigure, records: new CredentialRecords(store) };
  }
  const fileStore = async () => {
    const dir = mkdtempSync(join(tmpdir(), "tp-flows-"));
    dirs.push(dir);
    const store = await EncryptedFileTokenStore.open(dir, randomBytes(32));
    return { store, files: () => readdirSync(join(dir, "oauth")).filter((f) => f.endsWith(".tok")).length };
  };
  const registrations = () => as.requests.filter((r) => r.method === "POST" && r.path === "/reg").length;
  const metadata = (calls: { url: string }[]) => calls.filter((c) => c.url.includes("/.well-known/")).length;
  const cookieOf = (r: FlowResponse) => String(r.headers["set-cookie"]).split(";")[0]!;

  test("opening a link 2,000 times makes no flow and asks the authorization server nothing; confirming it, again and again, makes one flow with one discovery and one registration", async () => {
    const { store, files } = await fileStore();
    const { tickets, rec, go } = served({ mode: "per-user" }, store);
    const url = `/oauth/tools/start?ticket=${tickets.issue("tools", "static:mallory")}`;
    const regs = registrations();
    const opened = await Promise.all(Array.from({ length: 2000 }, () => go({ method: "GET", url })));
    expect(opened.every((r) => r.status === 200)).toBe(true);
    expect(files()).toBe(0);
    expect(rec.calls).toEqual([]);
    // The person continues, in as many tabs as they like: one flow, the same way to the AS each time.
    const cookie = cookieOf(opened[0]!);
    const confirm = cookie.split("=")[1]!;
    const form = () => new URLSearchParams({ confirm });
    const posts = await Promise.all(
      Array.from({ length: 200 }, () => go({ method: "POST", url, cookie, form: form() })),
    );
    expect(posts.every((r) => r.status === 303)).toBe(true);
    expect(new Set(posts.map((r) => r.headers.location)).size).toBe(1);
    expect(metadata(rec.calls)).toBe(2);
    expect(registrations() - regs).toBe(1);
    // The flow, the link's record of it, and the registration.
    expect(files()).toBe(3);
    // A form that did not come from toolpacks' own page (no matching cookie) starts nothing.
    const forged = await go({ method: "POST", url, form: form() });
    expect(forged.status).toBe(403);
  });

  test("starts of many principals at once discover once and register once", async () => {
    const { rec, go } = served({ mode: "per-user" });
    const regs = registrations();
    const starts = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        go({ method: "GET", url: "/oauth/tools/start", principal: `static:user-${i}` }),
      ),
    );
    expect(starts.every((r) => r.status === 302)).toBe(true);
    expect(new Set(starts.map((r) => r.headers.location)).size).toBe(50);
    expect(metadata(rec.calls)).toBe(2);
    expect(registrations() - regs).toBe(1);
  });

  test("flows in progress are bounded per principal (a newer one pushes out the oldest) and in total (then 503)", async () => {
    const { store, files } = await fileStore();
    const one = served({ mode: "per-user" }, store);
    const first = await one.go({
      method: "GET",
      url: "/oauth/tools/start?scope=s0",
      principal: "static:eve",
    });
    for (let i = 1; i < 20; i++)
      await one.go({ method: "GET", url: `/oauth/tools/start?scope=s${i}`, principal: "static:eve" });
    // Five flows and their links, and the registration.
    expect(files()).toBe(5 * 2 + 1);
    // The oldest was pushed out: its callback finds nothing.
    const state = new URL(String(first.headers.location)).searchParams.get("state")!;
    const late = await one.go({
      method: "GET",
      url: `/oauth/callback?state=${state}&code=x`,
      cookie: cookieOf(first),
    });
    expect(late.status).toBe(400);
    expect(late.body).toContain("unknown or already used authorization state");

    const many = served({ mode: "per-user" });
    for (let i = 0; i < 1000; i++) {
      const r = await many.go({ method: "GET", url: "/oauth/tools/start", principal: `static:u${i}` });
      expect(r.status).toBe(302);
    }
    const refused = await many.go({
      method: "GET",
      url: "/oauth/tools/start",
      principal: "static:one-too-many",
    });
    expect(refused.status).toBe(503);
    expect(refused.headers["retry-after"]).toBe("60");
  });

  test("a shared grant is stored only for a flow an administrator started, and only while the config still names them", async () => {
    const shared = served({ mode: "shared", admins: ["static:alice"] });
    // Not an administrator: refused before anything is asked of the AS.
    const bob = await shared.go({ method: "GET", url: "/oauth/tools/start", principal: "static:bob" });
    expect(bob.status).toBe(403);
    expect(shared.rec.calls).toEqual([]);
    // Alice starts it; before her callback arrives, a reload takes her off the list.
    const alice = await shared.go({ method: "GET", url: "/oauth/tools/start", principal: "static:alice" });
    expect(alice.status, alice.body).toBe(302);
    const callback = await authorizeAs(String(alice.headers.location), "alice-at-as");
    shared.reconfigure({ mode: "shared", admins: ["static:carol"] });
    const done = await shared.go({
      method: "GET",
      url: `${callback.pathname}${callback.search}`,
      cookie: cookieOf(alice),
    });
    expect(await shared.records.grant("tools", "")).toBeUndefined();
    expect(done.status).toBe(403);
    expect(done.body).toContain("not started by an administrator");
  });
});
