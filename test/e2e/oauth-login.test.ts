/** `toolpacks login` (the real CLI, dist/cli.js) against oidc-provider and the OAuth-protected MCP fixture. */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { OAuthClient } from "../../src/oauth/client.js";
import { withUpstreamAuth } from "../../src/oauth/fetch.js";
import { EncryptedFileTokenStore } from "../../src/oauth/store/file.js";
import { CredentialRecords } from "../../src/oauth/store/records.js";
import type { OAuthUpstream } from "../../src/oauth/types.js";
import {
  type AuthServer,
  authorizeAs,
  PRE_REGISTERED,
  type Protected,
  startAuthServer,
  startProtectedServer,
} from "../helpers/oauth.js";
import { CLI, ROOT, type Run, runCli, tempDir } from "../helpers/proc.js";

let as: AuthServer;
let mcp: Protected;
let mcpUrl = "";
const tmp = tempDir();
const KEY = randomBytes(32);
const KEY_ENV = { TOOLPACKS_TOKEN_KEY: KEY.toString("base64") };

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

let n = 0;
function config(oauth: string): string {
  return tmp.file(`packs-${++n}.yaml`, `upstreams:\n  tools:\n    url: ${mcpUrl}\n    oauth:\n${oauth}\n`);
}

/** Runs `toolpacks login`; `url` resolves with the authorization URL it prints. */
function login(
  args: string[],
  env: Record<string, string> = KEY_ENV,
): { url: Promise<string>; done: Promise<Run> } {
  const proc = spawn(process.execPath, [CLI, "login", ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let found: (url: string) => void = () => {};
  const url = new Promise<string>((ok) => {
    found = ok;
  });
  proc.stdout!.on("data", (c: Buffer) => {
    stdout += c.toString();
    const m = /^ {2}(http\S+)$/m.exec(stdout);
    if (m) found(m[1]!);
  });
  proc.stderr!.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  const done = new Promise<Run>((ok) => proc.once("close", (code) => ok({ code, stdout, stderr })));
  void done.then((r) => found(`(exited ${r.code}: ${r.stderr})`));
  return { url, done };
}

/** The stored credentials, read back with the key, and used for a real call. */
async function storedCall(state: string, up: OAuthUpstream) {
  const store = await EncryptedFileTokenStore.open(state, KEY);
  const records = new CredentialRecords(store);
  const client = new OAuthClient({
    store,
    upstream: () => up,
    redirectUri: "http://127.0.0.1/oauth/callback",
  });
  const c = new Client({ name: "after-login", version: "1" });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(mcpUrl), {
      fetch: withUpstreamAuth(client.auth("tools"), (u, i) => fetch(u, i)),
    }),
  );
  const me = (await c.callTool({ name: "whoami", arguments: {} })).structuredContent as Record<
    string,
    string
  >;
  await c.close();
  return { me, grant: await records.grant("tools", ""), records };
}

function expectNoSecrets(run: Run, secrets: (string | undefined)[]) {
  for (const s of secrets.filter((x): x is string => !!x && x.length >= 8))
    for (const form of [s, encodeURIComponent(s), Buffer.from(s).toString("base64")]) {
      expect(run.stdout).not.toContain(form);
      expect(run.stderr).not.toContain(form);
    }
}

describe("authorization code through a loopback redirect", () => {
  test("prints the authorization URL, stores the tokens it redeems, exits 0, and prints no secret", async () => {
    const state = join(tmp.dir, "state-a");
    const file = config("      mode: shared");
    const run = login(["tools", file, "--state-dir", state]);
    const url = await run.url;
    expect(new URL(url).origin).toBe(as.issuer);
    const callback = await authorizeAs(url, "operator");
    expect(callback.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const page = await fetch(callback);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("You can close this window");
    const done = await run.done;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toContain(`authorized tools at ${as.issuer}`);
    const up: OAuthUpstream = { name: "tools", url: mcpUrl, oauth: { mode: "shared" } };
    const { me, grant, records } = await storedCall(state, up);
    expect(me.sub).toBe("operator");
    const registered = await records.client(as.issuer, "loopback/oauth/callback");
    expectNoSecrets(done, [
      grant?.access_token,
      grant?.refresh_token,
      registered?.client_secret,
      callback.searchParams.get("code")!,
      KEY.toString("base64"),
      KEY.toString("hex"),
    ]);
  });

  test("the operator's login replaces the shared grant, and says so at warn and in the config's audit log", async () => {
    const state = join(tmp.dir, "state-audit");
    const audit = join(tmp.dir, "audit-login.jsonl");
    const file = tmp.file(
      "packs-audit.yaml",
      `audit: { file: ${audit} }\nupstreams:\n  tools:\n    url: ${mcpUrl}\n    oauth: { mode: shared }\n`,
    );
    const run = login(["tools", file, "--state-dir", state]);
    expect((await fetch(await authorizeAs(await run.url, "operator"))).status).toBe(200);
    const done = await run.done;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stderr).toMatch(
      /"level":"warn","msg":"oauth: the shared grant of upstream tools was replaced"/,
    );
    const lines = readFileSync(audit, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toEqual([
      expect.objectContaining({
        event: "oauth_grant",
        upstream: "tools",
        mode: "shared",
        action: "authorized",
        subject: null,
        by: "toolpacks login",
        via: "login",
      }),
    ]);
  });

  test("a callback whose state was not issued is refused: exit 1, nothing stored", async () => {
    const state = join(tmp.dir, "state-b");
    const run = login(["tools", config("      mode: shared"), "--state-dir", state]);
    const callback = await authorizeAs(await run.url);
    callback.searchParams.set("state", "forged");
    const page = await fetch(callback);
    expect(page.status).toBe(400);
    const done = await run.done;
    expect(done.code).toBe(1);
    expect(done.stderr).toContain("unknown or already used authorization state");
    const records = new CredentialRecords(await EncryptedFileTokenStore.open(state, KEY));
    expect(await records.grant("tools", "")).toBeUndefined();
  });

  test("a callback naming another issuer is refused before the code is redeemed", async () => {
    const state = join(tmp.dir, "state-c");
    const run = login(["tools", config("      mode: shared"), "--state-dir", state]);
    const callback = await authorizeAs(await run.url);
    const tokensBefore = as.requests.filter((r) => r.path === "/token").length;
    callback.searchParams.set("iss", "https://evil.example.com");
    expect((await fetch(callback)).status).toBe(400);
    const done = await run.done;
    expect(done.code).toBe(1);
    expect(done.stderr).toMatch(/comes from issuer https:\/\/evil.example.com/);
    expect(as.requests.filter((r) => r.path === "/token").length).toBe(tokensBefore);
  });
});

test("client_credentials: login fetches and stores a machine token, the secret coming from the environment", async () => {
  const state = join(tmp.dir, "state-cc");
  const file = config(
    "      mode: shared\n      grant: client_credentials\n      client_id: ${CC_ID}\n      client_secret: ${CC_SECRET}",
  );
  const env = { ...KEY_ENV, CC_ID: PRE_REGISTERED.machine_id, CC_SECRET: PRE_REGISTERED.machine_secret };
  const done = await runCli(["login", "tools", file, "--state-dir", state], { env });
  expect(done.code, done.stderr).toBe(0);
  const up: OAuthUpstream = {
    name: "tools",
    url: mcpUrl,
    oauth: {
      mode: "shared",
      grant: "client_credentials",
      client_id: PRE_REGISTERED.machine_id,
      client_secret: PRE_REGISTERED.machine_secret,
    },
  };
  const { me, grant } = await storedCall(state, up);
  expect(me.client_id).toBe(PRE_REGISTERED.machine_id);
  expectNoSecrets(done, [PRE_REGISTERED.machine_secret, grant?.access_token]);
});

describe("refusals", () => {
  test("without TOOLPACKS_TOKEN_KEY, login says what to set", async () => {
    const done = await runCli(
      ["login", "tools", config("      mode: shared"), "--state-dir", join(tmp.dir, "nokey")],
      {
        env: { TOOLPACKS_TOKEN_KEY: undefined },
      },
    );
    expect(done.code).toBe(1);
    expect(done.stderr).toMatch(
      /TOOLPACKS_TOKEN_KEY is not set: toolpacks login encrypts tokens at rest with it/,
    );
  });

  test("with another key than the store was written with, login refuses to touch it", async () => {
    const state = join(tmp.dir, "state-key");
    await EncryptedFileTokenStore.open(state, KEY);
    const other = randomBytes(32).toString("hex");
    const done = await runCli(["login", "tools", config("      mode: shared"), "--state-dir", state], {
      env: { TOOLPACKS_TOKEN_KEY: other },
    });
    expect(done.code).toBe(1);
    expect(done.stderr).toContain("TOOLPACKS_TOKEN_KEY is not the key");
    expect(done.stderr).not.toContain(other);
  });

  test("a per-user upstream is authorized by each principal, not by login", async () => {
    const file = tmp.file(
      "per-user.yaml",
      `auth: { tokens: [a-token-of-some-length] }\nupstreams:\n  tools:\n    url: ${mcpUrl}\n    oauth: { mode: per-user }\n`,
    );
    const done = await runCli(["login", "tools", file], { env: KEY_ENV });
    expect(done.code).toBe(1);
    expect(done.stderr).toContain("upstream tools is per-user");
  });

  test("a mistake in the oauth block is reported at its line and column", async () => {
    const done = await runCli(["login", "tools", config("      mode: shared\n      scope: [a]")], {
      env: KEY_ENV,
    });
    expect(done.code).toBe(1);
    expect(done.stderr).toMatch(
      /packs-\d+\.yaml:6:7: unknown key "scope" in upstreams\.tools\.oauth \(did you mean "scopes"\?\)/,
    );
  });
});
