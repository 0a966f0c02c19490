/**
 * toolpacks serve as the OAuth client of an upstream that accepts nothing else, through the real CLI: oidc-provider
 * as the authorization server, the OAuth-protected SDK fixture as the upstream, real SDK clients downstream.
 */
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { get as httpGet } from "node:http";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  type McpError,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { EncryptedFileTokenStore } from "../../src/oauth/store/file.js";
import { CredentialRecords } from "../../src/oauth/store/records.js";
import {
  type AuthServer,
  authorizeAs,
  authorizeThrough,
  confirmStart,
  PRE_REGISTERED,
  type Protected,
  startAuthServer,
  startProtectedServer,
} from "../helpers/oauth.js";
import { startIssuer, type TestIssuer } from "../helpers/oidc.js";
import { httpClient, runCli, type Served, serve, tempDir, toolNames, until } from "../helpers/proc.js";
import { freePort } from "../helpers/redis.js";
import { post } from "../helpers/wire.js";

let as: AuthServer;
let mcp: Protected;
let mcpUrl = "";
const tmp = tempDir();
const KEY = randomBytes(32);
const KEY_ENV = { TOOLPACKS_TOKEN_KEY: KEY.toString("base64") };
const TOKENS = {
  ALICE_TOKEN: "alice-token-7Hq2Lx9Pz",
  BOB_TOKEN: "bob-token-4Kd8Wm1Rv",
  CAROL_TOKEN: "carol-token-2Bn6Tc3Ys",
  DAVE_TOKEN: "dave-token-9Fj5Qe7Ua",
  ERIN_TOKEN: "erin-token-5Hs1Vb8Wn",
};
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

beforeAll(async () => {
  as = await startAuthServer({ resource: () => mcpUrl });
  mcp = await startProtectedServer(as.issuer);
  mcpUrl = mcp.url;
});
afterAll(async () => {
  await mcp?.stop();
  await as?.stop();
  tmp.cleanup();
});

type Seen = { sub: string; client_id: string; scope: string };
const whoami = async (c: Client) =>
  (await c.callTool({ name: "whoami", arguments: {} })).structuredContent as Seen;
const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (e: McpError) => e,
  );

describe("per-user: each principal authorizes for itself", () => {
  let served: Served;
  const state = join(tmp.dir, "state-per-user");

  beforeAll(async () => {
    const file = tmp.file(
      "per-user.yaml",
      `state_dir: ${state}
auth:
  tokens: ["\${ALICE_TOKEN}", "\${BOB_TOKEN}", "\${CAROL_TOKEN}", "\${DAVE_TOKEN}", "\${ERIN_TOKEN}"]
upstreams:
  tools:
    url: ${mcpUrl}
    oauth: { mode: per-user }
toolsets:
  me:
    tools: [tools/whoami]
`,
    );
    served = await serve([file], { ...KEY_ENV, ...TOKENS });
  });
  afterAll(async () => {
    await served?.stop();
  });

  const client = (token: string, capabilities = {}) => httpClient(served.url(), capabilities, bearer(token));

  let aliceUrl = "";

  test("a principal who has not authorized sees the toolset unavailable with a URL of its own, and gets it on a call", async () => {
    const alice = await client(TOKENS.ALICE_TOKEN);
    expect(await toolNames(alice)).toEqual(["list_server_toolsets"]);
    const report = JSON.parse(
      (
        (await alice.callTool({ name: "list_server_toolsets", arguments: {} })).content as { text: string }[]
      )[0]!.text,
    ) as { unavailable: { name: string; reason: string; url?: string }[] };
    expect(report.unavailable).toEqual([
      expect.objectContaining({ name: "me", reason: "authorization_required", url: expect.any(String) }),
    ]);
    const err = await failure(whoami(alice));
    expect(err.code).toBe(-32000);
    expect(err.message).toContain("authorization required: open ");
    const data = err.data as { reason: string; upstream: string; url: string };
    expect(data).toMatchObject({ reason: "authorization_required", upstream: "tools" });
    const url = new URL(data.url);
    expect(`${url.origin}${url.pathname}`).toBe(`${served.base}/oauth/tools/start`);
    expect(url.searchParams.get("ticket")).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    aliceUrl = data.url;
    await alice.close();
  });

  test("after authorizing at toolpacks' start page, the principal's session is told its list changed and its calls reach the upstream as itself", async () => {
    const alice = await client(TOKENS.ALICE_TOKEN);
    let changed = 0;
    alice.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      changed++;
    });
    const url = ((await failure(whoami(alice))).data as { url: string }).url;
    const done = await authorizeThrough(url, "alice-at-as");
    expect(done.status).toBe(200);
    expect(await done.text()).toContain("You can close this window");
    await until(() => changed > 0, "tools/list_changed after the authorization");
    expect(await toolNames(alice)).toEqual(["whoami", "list_server_toolsets"]);
    expect((await whoami(alice)).sub).toBe("alice-at-as");
    await alice.close();
    // A new session of the same principal uses the stored grant at once.
    const again = await client(TOKENS.ALICE_TOKEN);
    expect((await whoami(again)).sub).toBe("alice-at-as");
    await again.close();
  });

  test("another principal gets the authorization-required error with its own URL, never the first one's tokens or instance", async () => {
    const bob = await client(TOKENS.BOB_TOKEN);
    const err = await failure(whoami(bob));
    expect((err.data as { reason: string }).reason).toBe("authorization_required");
    const ticket = (u: string) => new URL(u).searchParams.get("ticket");
    expect(ticket((err.data as { url: string }).url)).not.toBe(ticket(aliceUrl));
    const report = async (token: string) =>
      (await (await fetch(`${served.base}/toolsets`, { headers: bearer(token) })).json()) as {
        active: string[];
        unavailable: { reason: string; url?: string }[];
      };
    expect((await report(TOKENS.BOB_TOKEN)).unavailable[0]).toMatchObject({
      reason: "authorization_required",
      url: expect.stringContaining("/oauth/tools/start?"),
    });
    expect((await report(TOKENS.ALICE_TOKEN)).active).toEqual(["me"]);
    // Bob with Alice's session id: refused, however he got it.
    const alice = await client(TOKENS.ALICE_TOKEN);
    const sid = (alice.transport as { sessionId?: string }).sessionId!;
    const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "whoami", arguments: {} } };
    const res = await post(served.url(), call, { session: sid, headers: bearer(TOKENS.BOB_TOKEN) });
    expect(res.status).toBe(403);
    await alice.close();
    await bob.close();
  });

  test("a 2026-07-28 request (no session) is served as its principal: the authorized one reaches the upstream as itself, another gets the error with its own URL and is sent no elicitation", async () => {
    const V = "2026-07-28";
    const call = (token: string) =>
      post(
        served.url(),
        {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: {
            name: "whoami",
            arguments: {},
            _meta: {
              "io.modelcontextprotocol/protocolVersion": V,
              "io.modelcontextprotocol/clientCapabilities": { elicitation: { url: {} } },
              "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
            },
          },
        },
        {
          headers: {
            ...bearer(token),
            "mcp-protocol-version": V,
            "mcp-method": "tools/call",
            "mcp-name": "whoami",
          },
        },
      );
    const alice = await call(TOKENS.ALICE_TOKEN);
    expect(alice.status).toBe(200);
    const done = alice.messages.find((m) => m.id === 1);
    expect(done?.error).toBeUndefined();
    expect((done?.result as { structuredContent?: Seen } | undefined)?.structuredContent?.sub).toBe(
      "alice-at-as",
    );
    const bob = await call(TOKENS.BOB_TOKEN);
    expect(bob.messages.filter((m) => m.method !== undefined && m.id !== undefined)).toEqual([]);
    const err = bob.messages.find((m) => m.id === 1)?.error;
    expect(err?.code).toBe(-32000);
    expect(err?.message).toContain("authorization required: open ");
    const data = err?.data as { reason: string; upstream: string; url: string };
    expect(data).toMatchObject({ reason: "authorization_required", upstream: "tools" });
    expect(new URL(data.url).searchParams.get("ticket")).not.toBe(
      new URL(aliceUrl).searchParams.get("ticket"),
    );
  });

  test("a handed-out link is dead once its principal has authorized, and the start page needs a ticket or a bearer", async () => {
    const used = await fetch(aliceUrl, { redirect: "manual" });
    expect(used.status).toBe(401);
    expect(await used.text()).toContain("was authorized since this link was issued");
    const bare = await fetch(`${served.base}/oauth/tools/start`, { redirect: "manual" });
    expect(bare.status).toBe(401);
    const forged = await fetch(`${served.base}/oauth/tools/start?ticket=${"A".repeat(60)}`, {
      redirect: "manual",
    });
    expect(forged.status).toBe(401);
    expect(await forged.text()).toContain("not valid or has expired");
  });

  test("a link handed to one principal and opened in another person's browser stores nothing: the page says whose account it binds, and another principal's bearer is refused", async () => {
    const { tokenSubject } = await import("../../src/auth/static-tokens.js");
    const erin = await client(TOKENS.ERIN_TOKEN);
    const url = ((await failure(whoami(erin))).data as { url: string }).url;
    const records = new CredentialRecords(await EncryptedFileTokenStore.open(state, KEY));
    const erinId = `static:${tokenSubject(TOKENS.ERIN_TOKEN)}`;
    const files = () => readdirSync(join(state, "oauth")).length;
    const before = files();
    // Alice's browser opens Erin's link and does what a browser does: follows a redirect, signs in at the AS.
    const opened = await fetch(url, { redirect: "manual" });
    if (opened.status === 302) {
      const cookie = opened.headers.getSetCookie()[0]!.split(";")[0]!;
      const callback = await authorizeAs(opened.headers.get("location")!, "alice-at-as");
      await fetch(callback, { headers: { cookie } });
    }
    expect(await records.grant("tools", erinId)).toBeUndefined();
    expect(opened.status).toBe(200);
    const text = await opened.text();
    expect(text).toContain(`for the toolpacks user ${tokenSubject(TOKENS.ERIN_TOKEN)}`);
    expect(text).toContain("If you are not");
    expect(files()).toBe(before);
    // A browser (or a client) that proves it is someone else is refused outright.
    const other = await fetch(url, { redirect: "manual", headers: bearer(TOKENS.ALICE_TOKEN) });
    expect(other.status).toBe(403);
    expect(await other.text()).toContain("this link is for another toolpacks user: nothing was stored");
    expect(files()).toBe(before);
    // Erin herself continues on the page, and only then is her account bound.
    expect((await authorizeThrough(url, "erin-at-as")).status).toBe(200);
    await until(async () => (await toolNames(erin)).includes("whoami"), "Erin's grant in use");
    expect((await whoami(erin)).sub).toBe("erin-at-as");
    await erin.close();
  });

  test("a 2025 client that declared URL elicitation is asked to open the URL, and its call goes through once it has authorized", async () => {
    const carol = await client(TOKENS.CAROL_TOKEN, { elicitation: { url: {} } });
    const asked: { mode?: string; url?: string; elicitationId?: string }[] = [];
    const completed: string[] = [];
    carol.setRequestHandler(ElicitRequestSchema, async (req) => {
      const params = req.params as { mode?: string; url?: string; elicitationId?: string };
      asked.push(params);
      // The user consents and finishes the flow in the browser.
      expect((await authorizeThrough(params.url!, "carol-at-as")).status).toBe(200);
      return { action: "accept" };
    });
    carol.setNotificationHandler(ElicitationCompleteNotificationSchema, async (n) => {
      completed.push(n.params.elicitationId);
    });
    expect((await whoami(carol)).sub).toBe("carol-at-as");
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ mode: "url", url: expect.stringContaining("/oauth/tools/start?") });
    await until(() => completed.length > 0, "notifications/elicitation/complete");
    expect(completed).toEqual([asked[0]!.elicitationId]);
    await carol.close();
  });

  test("a declined URL elicitation fails the call clearly, with the URL to use later", async () => {
    const dave = await client(TOKENS.DAVE_TOKEN, { elicitation: { url: {} } });
    dave.setRequestHandler(ElicitRequestSchema, async () => ({ action: "decline" }));
    const err = await failure(whoami(dave));
    expect(err.message).toMatch(
      /the authorization of upstream tools was declined; open http:\/\/127\.0\.0\.1:\d+\/oauth\/tools\/start\?\S+ to authorize/,
    );
    expect((err.data as { reason: string }).reason).toBe("authorization_required");
    await dave.close();
  });

  test("tokens are kept per principal in the encrypted store, and no file holds one in the clear", async () => {
    const records = new CredentialRecords(await EncryptedFileTokenStore.open(state, KEY));
    const { tokenSubject } = await import("../../src/auth/static-tokens.js");
    // Grants are kept under the principal's identity (SPEC §11.7): a static token's is `static:<subject>`.
    const grant = await records.grant("tools", `static:${tokenSubject(TOKENS.ALICE_TOKEN)}`);
    expect(grant?.access_token).toBeTruthy();
    expect(await records.grant("tools", `static:${tokenSubject(TOKENS.BOB_TOKEN)}`)).toBeUndefined();
    const dir = join(state, "oauth");
    for (const f of readdirSync(dir)) {
      const bytes = readFileSync(join(dir, f)).toString("latin1");
      expect(bytes).not.toContain(grant!.access_token.slice(0, 40));
      expect(bytes).not.toContain("alice-at-as");
    }
    expect(served.stderr()).not.toContain(grant!.access_token);
  });
});

describe("per-user behind the resource server: a grant belongs to the identity the token proves", () => {
  let served: Served;
  let issuer: TestIssuer;
  let audience = "";
  const state = join(tmp.dir, "state-per-user-jwt");

  beforeAll(async () => {
    issuer = await startIssuer({ audience: () => audience });
    const port = await freePort();
    audience = `http://127.0.0.1:${port}/mcp`;
    // The static token's subject is the JWT's `sub` (a client-credentials token's is its client id, "jwt"):
    // the same name in two namespaces, two identities.
    const file = tmp.file(
      "per-user-jwt.yaml",
      `state_dir: ${state}
auth:
  tokens:
    - { token: "\${ALICE_TOKEN}", subject: jwt }
  oauth: { issuer: ${issuer.issuer}, audience: ${audience}, scopes_supported: [mcp] }
upstreams:
  tools:
    url: ${mcpUrl}
    oauth: { mode: per-user }
toolsets:
  me:
    tools: [tools/whoami]
`,
    );
    served = await serve([file, "--port", String(port)], { ...KEY_ENV, ...TOKENS });
  });
  afterAll(async () => {
    await served?.stop();
    await issuer?.close();
  });

  test("a JWT user authorizes through its own link and its calls carry its grant; a static token of the same subject does not get it", async () => {
    const jwt = await issuer.token({ scope: "mcp" });
    const user = await httpClient(served.url(), {}, bearer(jwt));
    const url = ((await failure(whoami(user))).data as { url: string }).url;
    await user.close();
    expect((await authorizeThrough(url, "jwt-user-at-as")).status).toBe(200);
    const again = await httpClient(served.url(), {}, bearer(jwt));
    await until(async () => (await toolNames(again)).includes("whoami"), "the JWT user's grant in use");
    expect((await whoami(again)).sub).toBe("jwt-user-at-as");
    await again.close();
    const other = await httpClient(served.url(), {}, bearer(TOKENS.ALICE_TOKEN));
    const err = await failure(whoami(other));
    expect((err.data as { reason: string }).reason).toBe("authorization_required");
    await other.close();
  });
});

describe("shared: one grant for the deployment", () => {
  test("after toolpacks login, calls carry the stored grant, refreshed (and rotated) once it has expired; --live reads with it too", async () => {
    const state = join(tmp.dir, "state-shared");
    const file = tmp.file(
      "shared.yaml",
      `state_dir: ${state}\nupstreams:\n  tools:\n    url: ${mcpUrl}\n    oauth: { mode: shared }\n`,
    );
    const { spawn } = await import("node:child_process");
    const { CLI, ROOT } = await import("../helpers/proc.js");
    const login = spawn(process.execPath, [CLI, "login", "tools", file], {
      cwd: ROOT,
      env: { ...process.env, ...KEY_ENV },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    login.stdout!.on("data", (c: Buffer) => {
      out += c.toString();
    });
    const url = await until(() => /^ {2}(http\S+)$/m.exec(out)?.[1], "the authorization URL");
    const callback = await authorizeAs(url, "operator");
    expect((await fetch(callback)).status).toBe(200);
    expect(await new Promise((ok) => login.once("close", ok))).toBe(0);

    // The grant runs out before serve starts: its first request refreshes it.
    const records = new CredentialRecords(await EncryptedFileTokenStore.open(state, KEY));
    const first = (await records.grant("tools", ""))!;
    await records.putGrant("tools", "", { ...first, expires_at: Date.now() - 1000 });
    const served = await serve([file], KEY_ENV);
    try {
      const c = await httpClient(served.url());
      expect((await whoami(c)).sub).toBe("operator");
      await c.close();
      const after = (await records.grant("tools", ""))!;
      expect(after.access_token).not.toBe(first.access_token);
      expect(after.refresh_token).toBeTruthy();
      expect(after.refresh_token).not.toBe(first.refresh_token);
    } finally {
      await served.stop();
    }
    // The --live commands read the upstream with the same stored grant.
    const live = await runCli(["toolsets", file, "--live", "--json"], { env: KEY_ENV });
    expect(live.code, live.stderr).toBe(0);
    expect((JSON.parse(live.stdout) as { tools: string[] }).tools).toContain("whoami");
  });

  test("only an administrator named in oauth.admins replaces the shared grant through the start page; anyone else, however they try, stores nothing; the change is logged at warn and in the audit log", async () => {
    const state = join(tmp.dir, "state-page");
    const audit = join(tmp.dir, "audit-shared.jsonl");
    const file = tmp.file(
      "shared-page.yaml",
      `state_dir: ${state}
auth:
  tokens:
    - { token: "\${ALICE_TOKEN}", subject: alice }
    - { token: "\${BOB_TOKEN}", subject: bob }
audit: { file: ${audit} }
upstreams:
  tools:
    url: ${mcpUrl}
    oauth: { mode: shared, admins: ["static:alice"] }
toolsets:
  me:
    tools: [tools/whoami]
`,
    );
    const served = await serve([file], { ...KEY_ENV, ...TOKENS });
    const records = new CredentialRecords(await EncryptedFileTokenStore.open(state, KEY));
    try {
      const bob = await httpClient(served.url(), {}, bearer(TOKENS.BOB_TOKEN));
      const url = ((await failure(whoami(bob))).data as { url: string }).url;
      // Bob, with his link: the page asks for an administrator; his own token, as a form or a bearer, is refused.
      const page = await fetch(url, { redirect: "manual" });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("Only an administrator named in its oauth.admins");
      const posted = await confirmStart(url, TOKENS.BOB_TOKEN);
      expect(posted.status).toBe(403);
      expect(await posted.text()).toContain("nothing was stored");
      const direct = await fetch(url, { redirect: "manual", headers: bearer(TOKENS.BOB_TOKEN) });
      expect(direct.status).toBe(403);
      await expect(authorizeThrough(url, "bobs-own-account", TOKENS.BOB_TOKEN)).rejects.toThrow(/403/);
      expect(await records.grant("tools", "")).toBeUndefined();
      expect(served.stderr()).not.toMatch(/shared grant of upstream tools was replaced/);

      // Alice, an administrator, authorizes the team account for everyone.
      expect((await authorizeThrough(url, "team-account", TOKENS.ALICE_TOKEN)).status).toBe(200);
      await until(async () => (await toolNames(bob)).includes("whoami"), "whoami listed");
      expect((await whoami(bob)).sub).toBe("team-account");
      await until(
        () =>
          /toolpacks warn +oauth: the shared grant of upstream tools was replaced .*by=alice/.test(
            served.stderr(),
          ),
        "the warn line",
      );
      const lines = readFileSync(audit, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.event === "oauth_grant");
      expect(lines).toEqual([
        expect.objectContaining({
          upstream: "tools",
          mode: "shared",
          action: "authorized",
          subject: null,
          by: "alice",
          via: "page",
        }),
      ]);
      // Bob still cannot replace it: everyone's calls stay in the team account.
      expect((await confirmStart(url, TOKENS.BOB_TOKEN)).status).toBe(403);
      expect((await whoami(bob)).sub).toBe("team-account");
      expect(served.stderr()).not.toContain(TOKENS.ALICE_TOKEN);
      await bob.close();
    } finally {
      await served.stop();
    }
  });

  test("without auth: nobody can be an administrator: the start page says to use toolpacks login, and no flow replaces the shared grant", async () => {
    const state = join(tmp.dir, "state-open");
    const file = tmp.file(
      "shared-open.yaml",
      `state_dir: ${state}\nupstreams:\n  tools:\n    url: ${mcpUrl}\n    oauth: { mode: shared }\ntoolsets:\n  me:\n    tools: [tools/whoami]\n`,
    );
    const served = await serve([file], KEY_ENV);
    try {
      const c = await httpClient(served.url());
      const url = ((await failure(whoami(c))).data as { url: string }).url;
      // Anyone who reaches the page, doing what a browser does with it.
      const opened = await fetch(url, { redirect: "manual" });
      if (opened.status === 302) {
        const cookie = opened.headers.getSetCookie()[0]!.split(";")[0]!;
        await fetch(await authorizeAs(opened.headers.get("location")!, "someones-account"), {
          headers: { cookie },
        });
      }
      const records = new CredentialRecords(await EncryptedFileTokenStore.open(state, KEY));
      expect(await records.grant("tools", "")).toBeUndefined();
      expect(opened.status).toBe(403);
      expect(await opened.text()).toContain("toolpacks login tools");
      await c.close();
    } finally {
      await served.stop();
    }
  });
});

test("client_credentials: machine to machine, the client secret from the environment, no token key needed", async () => {
  const file = tmp.file(
    "machine.yaml",
    `upstreams:\n  tools:\n    url: ${mcpUrl}\n    oauth:\n      mode: shared\n      grant: client_credentials\n      client_id: \${CC_ID}\n      client_secret: \${CC_SECRET}\n`,
  );
  const served = await serve([file], {
    CC_ID: PRE_REGISTERED.machine_id,
    CC_SECRET: PRE_REGISTERED.machine_secret,
    TOOLPACKS_TOKEN_KEY: "",
  });
  try {
    const c = await httpClient(served.url());
    expect((await whoami(c)).client_id).toBe(PRE_REGISTERED.machine_id);
    await c.close();
    expect(served.stderr()).not.toContain(PRE_REGISTERED.machine_secret);
  } finally {
    await served.stop();
  }
});

test("with an https --public-url, handed-out links point there and the Client ID Metadata Document is served", async () => {
  const file = tmp.file(
    "public.yaml",
    `state_dir: ${join(tmp.dir, "state-public")}\nauth: { tokens: ["\${ALICE_TOKEN}"] }\nupstreams:\n  tools:\n    url: ${mcpUrl}\n    oauth: { mode: per-user }\ntoolsets:\n  me:\n    tools: [tools/whoami]\n`,
  );
  const served = await serve([file, "--public-url", "https://toolpacks.example.com/"], {
    ...KEY_ENV,
    ...TOKENS,
  });
  try {
    const c = await httpClient(served.url(), {}, bearer(TOKENS.ALICE_TOKEN));
    const url = ((await failure(whoami(c))).data as { url: string }).url;
    expect(url).toMatch(/^https:\/\/toolpacks\.example\.com\/oauth\/tools\/start\?/);
    await c.close();
    const doc = await fetch(`${served.base}/oauth/client-metadata.json`);
    expect(doc.status).toBe(200);
    expect(await doc.json()).toMatchObject({
      client_id: "https://toolpacks.example.com/oauth/client-metadata.json",
      redirect_uris: expect.arrayContaining(["https://toolpacks.example.com/oauth/callback"]),
    });
    // The public host is accepted as a Host; another is not.
    const status = (host: string) =>
      new Promise<number | undefined>((ok, fail) =>
        httpGet(`${served.base}/oauth/client-metadata.json`, { headers: { host } }, (res) => {
          res.resume();
          ok(res.statusCode);
        }).once("error", fail),
      );
    expect(await status("toolpacks.example.com")).toBe(200);
    expect(await status("evil.example")).toBe(403);
  } finally {
    await served.stop();
  }
});

test("per-user without TOOLPACKS_TOKEN_KEY: serve refuses to start and says why", async () => {
  const file = tmp.file(
    "nokey.yaml",
    `auth: { tokens: ["\${ALICE_TOKEN}"] }\nupstreams:\n  tools:\n    url: ${mcpUrl}\n    oauth: { mode: per-user }\n`,
  );
  const run = await runCli(["serve", file, "--port", "0"], {
    env: { ...TOKENS, TOOLPACKS_TOKEN_KEY: undefined },
  });
  expect(run.code).toBe(1);
  expect(run.stderr).toMatch(/TOOLPACKS_TOKEN_KEY is not set: OAuth for upstream tools \(per-user\)/);
});
