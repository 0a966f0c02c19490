/**
 * Who is asking decides what they get, through the real CLI: `toolpacks serve` as an OAuth resource server
 * with oidc-provider as the issuer, toolsets by scope and claim, sessions bound to their subject, step-up,
 * and the audit log.
 */
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { gatedPacks } from "../helpers/identity.js";
import { startIssuer, type TestIssuer } from "../helpers/oidc.js";
import {
  ROOT,
  runCli,
  type Served,
  serve,
  startListening,
  stdioClient,
  tempDir,
  toolNames,
  until,
} from "../helpers/proc.js";
import { freePort } from "../helpers/redis.js";
import { initializeRequest, type Message, openSession, post, request } from "../helpers/wire.js";

const CI_TOKEN = "ci-static-token-5c1e8b7d";
const tmp = tempDir();

let as: TestIssuer;
let plain: Served;
let stepUp: Served;
let audience: string;
let stepUpAudience: string;
let echoServer: ChildProcess | undefined;

beforeAll(async () => {
  const echo = startListening([join(ROOT, "test/fixtures/http-echo-server.mjs")]);
  echoServer = echo.proc;
  const echoUrl = `http://127.0.0.1:${await echo.listening}/mcp`;
  // The audience is the server's URL, so its port is chosen first (after the issuer has taken its own).
  as = await startIssuer({ audience: () => audience });
  const [p1, p2] = [await freePort(), await freePort()];
  audience = `http://127.0.0.1:${p1}/mcp`;
  stepUpAudience = `http://127.0.0.1:${p2}/mcp`;
  const audit = join(tmp.dir, "audit.jsonl");
  const a = tmp.file(
    "plain.yaml",
    gatedPacks({
      issuer: as.issuer,
      audience,
      staticToken: true,
      top: `audit: { file: ${JSON.stringify(audit)}, arguments: true }`,
      upstreams: `  remote: { url: "${echoUrl}" }`,
      toolsets: "  remote: { default: false, tools: [remote/whoami] }",
    }),
  );
  const b = tmp.file(
    "step-up.yaml",
    gatedPacks({
      issuer: as.issuer,
      audience: stepUpAudience,
      staticToken: true,
      oauth: "    step_up: true",
      top: "audit: { stderr: true, subject: digest }",
    }),
  );
  [plain, stepUp] = await Promise.all([
    serve([a, "--port", String(p1), "--log-level", "debug"], { CI_TOKEN }),
    serve([b, "--port", String(p2), "--log-level", "debug"], { CI_TOKEN }),
  ]);
});

afterAll(async () => {
  await Promise.all([plain?.stop(), stepUp?.stop()]);
  echoServer?.kill("SIGKILL");
  await as?.close();
  tmp.cleanup();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const names = (m: Message) => ((m.result as { tools: { name: string }[] }).tools ?? []).map((t) => t.name);
const toolsets = async (base: string, query: string, token: string) => {
  const res = await fetch(`${base}/toolsets${query}`, { headers: bearer(token) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

/** A token signed with the issuer's own key, with claims of our choosing (for what the issuer will not mint). */
async function forged(claims: Record<string, unknown>): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: as.issuer, aud: audience, sub: "jwt", scope: "mcp", iat: now - 60, ...claims })
    .setProtectedHeader({ alg: "RS256", kid: as.key.kid, typ: "at+jwt" })
    .sign(as.key.privateKey);
}

describe("a token is needed, and must be for this server", () => {
  test("a request without a token gets 401 pointing at the resource metadata, which names the issuer and this audience", async () => {
    const res = await post(plain.url(), initializeRequest());
    expect(res.status).toBe(401);
    const rm = `${plain.base}/.well-known/oauth-protected-resource/mcp`;
    expect(res.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${rm}", scope="mcp"`);
    for (const url of [rm, `${plain.base}/.well-known/oauth-protected-resource`]) {
      const doc = await fetch(url);
      expect(doc.status).toBe(200);
      expect(doc.headers.get("access-control-allow-origin")).toBe("*");
      expect(await doc.json()).toEqual({
        resource: audience,
        authorization_servers: [as.issuer],
        scopes_supported: ["mcp"],
        bearer_methods_supported: ["header"],
      });
    }
    for (const path of ["/toolsets", "/metrics"])
      expect((await fetch(`${plain.base}${path}`)).status).toBe(401);
    expect((await fetch(`${plain.base}/healthz`)).status).toBe(200);
  });

  test("a 401 on a URL naming a gated toolset asks for its scope too", async () => {
    const res = await post(plain.url("admin"), initializeRequest());
    expect(res.headers.get("www-authenticate")).toContain('scope="mcp admin"');
  });

  test("an expired token is refused with invalid_token", async () => {
    const token = await forged({ exp: Math.floor(Date.now() / 1000) - 3600 });
    const res = await post(plain.url(), initializeRequest(), { headers: bearer(token) });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
    expect(res.headers.get("www-authenticate")).toContain("expired");
    // The same claims, not expired, are accepted: the refusal was the expiry.
    const fresh = await forged({ exp: Math.floor(Date.now() / 1000) + 300 });
    expect((await post(plain.url(), initializeRequest(), { headers: bearer(fresh) })).status).toBe(200);
  });

  test("a token the issuer minted for another resource is refused (audience)", async () => {
    const token = await as.token({ resource: "http://127.0.0.1:1/mcp" });
    const res = await post(plain.url(), initializeRequest(), { headers: bearer(token) });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/error="invalid_token".*aud/);
  });
});

describe("toolsets by identity", () => {
  test("two principals with different scopes on the same URL get different tools, and neither can call the other's", async () => {
    const url = plain.url("eng");
    const admin = await as.token({ client: "jwt", scope: "mcp admin" });
    const eng = await as.token({ client: "toolpacks", scope: "mcp", claims: { groups: ["eng"] } });
    const a = await openSession(url, { headers: bearer(admin) });
    const e = await openSession(url, { headers: bearer(eng) });
    const listA = (await request(url, a.session, 1, "tools/list", {}, { headers: bearer(admin) })).answer;
    const listE = (await request(url, e.session, 1, "tools/list", {}, { headers: bearer(eng) })).answer;
    expect(names(listA)).toEqual(["echo", "add", "list_server_toolsets"]);
    expect(names(listE)).toEqual(["echo", "with_meta", "list_server_toolsets"]);
    const call = async (s: string, token: string, name: string) =>
      (
        await request(
          url,
          s,
          2,
          "tools/call",
          { name, arguments: { a: 1, b: 2 } },
          { headers: bearer(token) },
        )
      ).answer;
    expect((await call(a.session, admin, "with_meta")).error).toMatchObject({
      message: "Unknown tool: with_meta",
    });
    expect((await call(e.session, eng, "add")).error).toMatchObject({ message: "Unknown tool: add" });
    expect((await call(a.session, admin, "add")).result).toMatchObject({ structuredContent: { sum: 3 } });
  });

  test("/toolsets says forbidden, with what it needs, for what a principal lacks, and never lists its tools", async () => {
    const token = await as.token({ scope: "mcp" });
    const { status, body } = await toolsets(plain.base, "?eng", token);
    expect(status).toBe(200);
    expect(body.active).toEqual(["notes"]);
    expect(body.tools).toEqual(["echo", "list_server_toolsets"]);
    expect(body.unavailable).toEqual([
      {
        name: "admin",
        reason: "forbidden",
        missing: [],
        detail: "needs the scope admin",
        requires: { scopes: ["admin"] },
      },
      {
        name: "eng",
        reason: "forbidden",
        missing: [],
        detail: "needs groups eng",
        requires: { claims: { groups: ["eng"] } },
      },
    ]);
    const admin = (body.toolsets as { name: string; forbidden?: boolean }[]).find((t) => t.name === "admin");
    expect(admin).toMatchObject({ forbidden: true, active: false });
    // A static token with its own scopes is a principal too: notes:read is not admin.
    expect((await toolsets(plain.base, "", CI_TOKEN)).body.active).toEqual(["notes"]);
  });

  test("list_server_toolsets reports the same forbidden toolsets to its caller", async () => {
    const token = await as.token({ scope: "mcp" });
    const url = plain.url("eng");
    const { session } = await openSession(url, { headers: bearer(token) });
    const { answer } = await request(
      url,
      session,
      1,
      "tools/call",
      { name: "list_server_toolsets", arguments: {} },
      { headers: bearer(token) },
    );
    const report = (
      answer.result as { structuredContent: { unavailable: { name: string; reason: string }[] } }
    ).structuredContent;
    expect(report.unavailable.map((u) => [u.name, u.reason])).toEqual([
      ["admin", "forbidden"],
      ["eng", "forbidden"],
    ]);
  });

  test("toolpacks toolsets --as answers for a principal's claims without a server", async () => {
    const file = join(tmp.dir, "plain.yaml");
    const r = await runCli(
      ["toolsets", file, "--select", "eng", "--as", '{"scope":"mcp","groups":["eng"]}', "--json"],
      {
        env: { CI_TOKEN },
      },
    );
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { active: string[]; unavailable: { name: string }[] };
    expect(report.active).toEqual(["notes", "eng"]);
    expect(report.unavailable.map((u) => u.name)).toEqual(["admin"]);
    const bad = await runCli(["toolsets", file, "--as", "scope=mcp"], { env: { CI_TOKEN } });
    expect(bad.code).toBe(2);
  });
});

describe("over stdio", () => {
  test("a gated toolset is off unless serve --as gives the session a principal that meets it", async () => {
    const file = join(tmp.dir, "plain.yaml");
    const anonymous = await stdioClient([file, "--toolsets", "eng"], { CI_TOKEN });
    expect(await toolNames(anonymous.client)).toEqual(["echo", "list_server_toolsets"]);
    await anonymous.client.close();
    const eng = await stdioClient(
      [file, "--toolsets", "eng", "--as", '{"sub":"me","scope":"admin","groups":["eng"]}'],
      {
        CI_TOKEN,
      },
    );
    expect(await toolNames(eng.client)).toEqual(["echo", "add", "with_meta", "list_server_toolsets"]);
    await eng.client.close();
  });
});

describe("the client's token is for toolpacks", () => {
  test("the client's token never reaches an upstream", async () => {
    const token = await as.token({ scope: "mcp" });
    const url = plain.url("remote");
    const { session } = await openSession(url, { headers: bearer(token) });
    const { answer } = await request(
      url,
      session,
      1,
      "tools/call",
      { name: "whoami", arguments: {} },
      {
        headers: bearer(token),
      },
    );
    const seen = JSON.stringify(answer.result);
    expect(seen).toContain('"authorization":null');
    expect(seen).not.toContain(token.slice(-20));
  });
});

describe("sessions belong to who opened them", () => {
  test("a session used with another subject's token gets 403", async () => {
    const url = plain.url();
    const mine = await as.token({ client: "jwt" });
    const theirs = await as.token({ client: "toolpacks" });
    const { session } = await openSession(url, { headers: bearer(mine) });
    const ping = { jsonrpc: "2.0", id: 5, method: "ping" };
    const res = await post(url, ping, { session, headers: bearer(theirs) });
    expect(res.status).toBe(403);
    expect(res.text).toContain("another identity");
    // A new token of the same subject is the same identity.
    const again = await as.token({ client: "jwt" });
    expect((await post(url, ping, { session, headers: bearer(again) })).status).toBe(200);
  });

  test("a later request whose token lacks a scope the session's toolsets need gets 403 insufficient_scope naming it", async () => {
    const url = plain.url();
    const full = await as.token({ scope: "mcp admin" });
    const { session } = await openSession(url, { headers: bearer(full) });
    const narrow = await as.token({ scope: "mcp" });
    const res = await post(
      url,
      { jsonrpc: "2.0", id: 1, method: "tools/list" },
      { session, headers: bearer(narrow) },
    );
    expect(res.status).toBe(403);
    const challenge = res.headers.get("www-authenticate") ?? "";
    expect(challenge).toContain('error="insufficient_scope"');
    expect(challenge).toContain('scope="mcp admin"');
  });
});

describe("step-up (auth.oauth.step_up: true)", () => {
  test("a URL naming a toolset whose scope the token lacks gets 403 insufficient_scope with the scopes; a bare URL never does", async () => {
    const token = await as.token({ scope: "mcp", resource: stepUpAudience });
    const named = await post(stepUp.url("admin"), initializeRequest(), { headers: bearer(token) });
    expect(named.status).toBe(403);
    expect(named.headers.get("www-authenticate")).toMatch(
      /^Bearer error="insufficient_scope", scope="mcp admin"/,
    );
    expect((await fetch(`${stepUp.base}/toolsets?admin`, { headers: bearer(token) })).status).toBe(403);
    // admin is a default toolset: a URL that names nothing is served, admin reported forbidden.
    expect((await post(stepUp.url(), initializeRequest(), { headers: bearer(token) })).status).toBe(200);
    // A claim a new token would not bring is no reason for a 403: eng is served around.
    expect((await post(stepUp.url("eng"), initializeRequest(), { headers: bearer(token) })).status).toBe(200);
    // With the scope, the same URL opens.
    const stepped = await as.token({ scope: "mcp admin", resource: stepUpAudience });
    expect((await post(stepUp.url("admin"), initializeRequest(), { headers: bearer(stepped) })).status).toBe(
      200,
    );
  });

  test("without step-up, a URL naming a forbidden toolset still opens and reports it", async () => {
    const token = await as.token({ scope: "mcp" });
    const res = await post(plain.url("admin"), initializeRequest(), { headers: bearer(token) });
    expect(res.status).toBe(200);
  });
});

describe("who did what", () => {
  test("every call writes one audit line with its subject, and its arguments only where configured", async () => {
    const token = await as.token({ client: "toolpacks", scope: "mcp admin" });
    for (const served of [plain, stepUp]) {
      const url = served.url();
      const headers = bearer(
        served === plain
          ? token
          : await as.token({ client: "toolpacks", scope: "mcp", resource: stepUpAudience }),
      );
      const { session } = await openSession(url, { headers });
      await request(
        url,
        session,
        1,
        "tools/call",
        { name: "echo", arguments: { text: "audited" } },
        { headers },
      );
    }
    const file = join(tmp.dir, "audit.jsonl");
    const lines = await until(() => {
      const text = (() => {
        try {
          return readFileSync(file, "utf8");
        } catch {
          return "";
        }
      })();
      const found = text
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => (l.arguments as { text?: string } | undefined)?.text === "audited");
      return found.length ? found : undefined;
    }, "an audit line");
    expect(lines[0]).toMatchObject({
      subject: "toolpacks",
      selection: "notes,admin",
      toolset: "notes",
      tool: "echo",
      upstream: "fx",
      outcome: "ok",
      arguments: { text: "audited" },
    });
    expect(typeof lines[0]!.duration_ms).toBe("number");
    expect(typeof lines[0]!.time).toBe("string");
    // The step-up server writes to stderr, subjects as digests, no arguments.
    const line = await until(
      () =>
        stepUp
          .stderr()
          .split("\n")
          .find((l) => l.startsWith("{") && l.includes('"tool":"echo"')),
      "an audit line on stderr",
    );
    const entry = JSON.parse(line) as Record<string, unknown>;
    expect(entry.subject).toMatch(/^sub:[0-9a-f]{16}$/);
    expect(entry).not.toHaveProperty("arguments");
    expect(stepUp.stderr()).not.toContain("subject=toolpacks");
  });

  test("a call's log line and metric carry the subject", async () => {
    const token = await as.token({ client: "toolpacks", scope: "mcp" });
    const url = plain.url();
    const { session } = await openSession(url, { headers: bearer(token) });
    await request(
      url,
      session,
      1,
      "tools/call",
      { name: "echo", arguments: { text: "x" } },
      { headers: bearer(token) },
    );
    await until(() => plain.stderr().includes("subject=toolpacks"), "a call log line with its subject");
    const metrics = await (await fetch(`${plain.base}/metrics`, { headers: bearer(token) })).text();
    expect(metrics).toMatch(/toolpacks_subject_calls_total\{subject="toolpacks",outcome="ok"\} \d+/);
  });

  test("no token reaches a log line or the audit log", async () => {
    const text = `${plain.stderr()}\n${stepUp.stderr()}\n${readFileSync(join(tmp.dir, "audit.jsonl"), "utf8")}`;
    expect(text).not.toContain(CI_TOKEN);
    expect(text).not.toMatch(/eyJ[\w-]+\.eyJ[\w-]+\./);
  });
});
