/** A secret leaks into some output: every command and every route, with known secrets in the environment. */
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type JSONRPCMessage, McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { sha256Hex } from "../../src/oauth/authorize.js";
import { EncryptedFileTokenStore } from "../../src/oauth/store/file.js";
import { CredentialRecords } from "../../src/oauth/store/records.js";
import { startHttpUpstream } from "../helpers/http-upstream.js";
import {
  type AuthServer,
  authorizeAs,
  confirmStart,
  PRE_REGISTERED,
  type Protected,
  startAuthServer,
  startProtectedServer,
} from "../helpers/oauth.js";
import { CLIENT_SECRET, startIssuer, type TestIssuer } from "../helpers/oidc.js";
import { alive, CLI, FIXTURE, ROOT, type Served, serve, tempDir, until } from "../helpers/proc.js";
import { freePort } from "../helpers/redis.js";
import { closeSession, MCP_HEADERS, openSession, post, request } from "../helpers/wire.js";

const SECRET_TOKEN = "tok_Zx81KqLw5Jm3Tb0N";
const SECRET_KEY = "key_Vy62HsPd9Rf4Gc7E";
const SECRETS = { SECRET_TOKEN, SECRET_KEY };
const BEARER = { authorization: `Bearer ${SECRET_TOKEN}` };

/** Every form a secret could take on its way out: as is, its distinctive core, URL- or base64-encoded. */
const FORMS = [SECRET_TOKEN, SECRET_KEY].flatMap((s) => [
  s,
  s.slice(4),
  encodeURIComponent(s),
  Buffer.from(s).toString("base64"),
  Buffer.from(`Bearer ${s}`).toString("base64"),
]);

function expectNoSecret(where: string, text: string): void {
  for (const form of FORMS) {
    if (text.includes(form)) {
      const at = text.indexOf(form);
      throw new Error(`${where} leaks a secret (${form}): …${text.slice(Math.max(0, at - 120), at + 60)}…`);
    }
  }
}

const headersText = (h: Headers) => [...h.entries()].map(([k, v]) => `${k}: ${v}`).join("\n");

const tmp = tempDir();
const config = tmp.file(
  "packs.yaml",
  `
name: secrets-gateway
auth:
  tokens: ["\${SECRET_TOKEN}"]
upstreams:
  main:
    command: node
    args: ["${FIXTURE}", "--name", "main"]
    env:
      FIXTURE_API_KEY: "\${SECRET_KEY}"
      FIXTURE_AUTH: "Bearer \${SECRET_TOKEN}"
  crashy:
    command: node
    args: ["${FIXTURE}", "--name", "crashy", "--tools", "echo", "--crash-on", "echo"]
    prefix: crashy_
    env:
      FIXTURE_API_KEY: "\${SECRET_KEY}"
  remote:
    url: "http://127.0.0.1:9/mcp?key=\${SECRET_KEY}"
    headers:
      Authorization: "Bearer \${SECRET_TOKEN}"
      X-Api-Key: "\${SECRET_KEY}"
    connect_timeout: 5
toolsets:
  core:
    tools: [main/echo, main/fail, main/throw]
  crash:
    default: false
    tools: [crashy/echo]
  remote:
    default: false
    tools: [remote/search]
`,
);

function cli(args: string[], env: Record<string, string> = SECRETS) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: "utf8",
    timeout: 30_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

afterAll(() => tmp.cleanup());

describe("commands", () => {
  test("check never prints a secret", () => {
    const r = cli(["check", config]);
    expect(r.status, r.stderr).toBe(0);
    // The url is shown as written.
    expect(r.stdout).toContain("http://127.0.0.1:9/mcp?key=${SECRET_KEY}");
    expectNoSecret("check stdout", r.stdout);
    expectNoSecret("check stderr", r.stderr);
  });

  test.each([
    [["--json"]],
    [[]],
    [["--select", "remote&crash", "--json"]],
    [["--select", "only=remote"]],
    [["--select", "nonsense&remote"]],
  ])("toolsets %j never prints a secret", (extra) => {
    const r = cli(["toolsets", config, ...extra]);
    expect(r.status, r.stderr).toBe(0);
    if (extra.includes("--json")) expect(JSON.parse(r.stdout)).toHaveProperty("toolsets");
    expectNoSecret("toolsets stdout", r.stdout);
    expectNoSecret("toolsets stderr", r.stderr);
  });

  test("serve over stdio never writes a secret to stdout or stderr", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, "serve", "--transport", "stdio", "--toolsets", "remote&crash", config],
      cwd: ROOT,
      env: { ...(process.env as Record<string, string>), ...SECRETS, TOOLPACKS_LOG_LEVEL: "debug" },
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    const client = new Client({ name: "e2e-secrets", version: "1.0.0" });
    await client.connect(transport);
    // Everything the server says, as it arrives (notifications included).
    const wire: string[] = [];
    const deliver = transport.onmessage;
    transport.onmessage = (m: JSONRPCMessage) => {
      wire.push(JSON.stringify(m));
      deliver?.(m);
    };
    const pid = transport.pid!;
    const seen: unknown[] = [client.getServerVersion(), client.getInstructions()];
    seen.push(await client.listTools());
    seen.push(await client.callTool({ name: "list_server_toolsets", arguments: {} }));
    seen.push(await client.callTool({ name: "echo", arguments: { text: "hi" } }));
    seen.push(await client.callTool({ name: "search", arguments: {} }).catch((e: Error) => e.message));
    seen.push(
      await client
        .callTool({ name: "crashy_echo", arguments: { text: "boom" } })
        .catch((e: Error) => e.message),
    );
    seen.push(await client.callTool({ name: "list_server_toolsets", arguments: {} }));
    await client.close();
    while (alive(pid)) await new Promise((r) => setTimeout(r, 50));
    expect(JSON.stringify(seen)).toContain("remote");
    expectNoSecret("stdio answers", JSON.stringify(seen));
    expectNoSecret("stdio stdout", wire.join("\n"));
    expect(stderr).toMatch(/debug/);
    expectNoSecret("stdio stderr", stderr);
  });
});

describe("serve over HTTP at --log-level debug", () => {
  let served: Served;
  beforeAll(async () => {
    served = await serve([config, "--log-level", "debug"], SECRETS);
  });
  afterAll(async () => {
    await served?.stop();
  });

  test("/healthz never shows a secret", async () => {
    const res = await fetch(`${served.base}/healthz`);
    expect(res.status).toBe(200);
    expectNoSecret("/healthz headers", headersText(res.headers));
    expectNoSecret("/healthz body", await res.text());
  });

  test.each([
    ["no token", {}],
    ["a wrong token", { authorization: "Bearer tok_wrong_but_long_enough" }],
    ["a token that is a prefix of the right one", { authorization: `Bearer ${SECRET_TOKEN.slice(0, 8)}` }],
    ["a Basic scheme", { authorization: `Basic ${Buffer.from(`u:${SECRET_TOKEN}`).toString("base64")}` }],
  ])(
    "a request with %s is refused, and its 401 shows no secret",
    async (_what, auth: Record<string, string>) => {
      const answers = [
        await fetch(served.url(), {
          method: "POST",
          headers: { ...MCP_HEADERS, ...auth },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
        }),
        await fetch(`${served.base}/toolsets?remote`, { headers: auth }),
        await fetch(served.url(), { headers: { accept: "text/event-stream", ...auth } }),
      ];
      for (const res of answers) {
        expect(res.status).toBe(401);
        expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
        expectNoSecret("401 headers", headersText(res.headers));
        const body = await res.text();
        expect(JSON.parse(body)).toMatchObject({ error: { message: expect.stringMatching(/Unauthorized/) } });
        // A Basic header carries the secret base64-encoded: the answer must not echo it back either.
        expectNoSecret("401 body", body);
      }
    },
  );

  test.each(["", "?remote", "?remote&crash", "?only=remote", "?bogus"])(
    "/toolsets%s never shows a secret (an unreachable upstream's reason included)",
    async (query) => {
      const res = await fetch(`${served.base}/toolsets${query}`, { headers: BEARER });
      expect(res.status).toBe(200);
      const body = await res.text();
      if (query.includes("remote")) expect(body).toMatch(/unavailable/);
      expectNoSecret(`/toolsets${query} headers`, headersText(res.headers));
      expectNoSecret(`/toolsets${query} body`, body);
    },
  );

  test("a session's answers (tools/list, list_server_toolsets, failing calls) never show a secret", async () => {
    const url = served.url("remote&crash");
    const { session, init } = await openSession(url, { headers: BEARER });
    const replies = [init];
    const ask = async (id: number, method: string, params: Record<string, unknown> = {}) => {
      const { reply, answer } = await request(url, session, id, method, params, { headers: BEARER });
      replies.push(reply);
      return answer;
    };
    await ask(1, "tools/list");
    const report = await ask(2, "tools/call", { name: "list_server_toolsets", arguments: {} });
    expect(JSON.stringify(report)).toMatch(/remote/);
    // The unreachable upstream's toolset: its tool is not offered, and calling it fails.
    expect((await ask(3, "tools/call", { name: "search", arguments: {} })).error).toBeDefined();
    // A stdio upstream with the secret in its env, dying mid-call.
    const crashed = await ask(4, "tools/call", { name: "crashy_echo", arguments: { text: "boom" } });
    expect(crashed.error ?? (crashed.result as { isError?: boolean }).isError).toBeTruthy();
    await ask(5, "tools/call", { name: "throw", arguments: {} });
    await ask(6, "tools/call", { name: "fail", arguments: {} });
    await ask(7, "resources/read", { uri: `file:///${SECRET_KEY.slice(0, 3)}` });
    await ask(8, "tools/call", { name: "list_server_toolsets", arguments: {} });
    // A session id without the token is refused, and the refusal says nothing either.
    replies.push(await post(url, { jsonrpc: "2.0", id: 9, method: "ping" }, { session }));
    expect(replies.at(-1)!.status).toBe(401);
    for (const r of replies) {
      expectNoSecret("session headers", headersText(r.headers));
      expectNoSecret("session body", r.text);
    }
    expect(await closeSession(url, session, { headers: BEARER })).toBe(200);
  });

  test("an SDK client's session never shows a secret on the wire", async () => {
    const wire: string[] = [];
    const transport = new StreamableHTTPClientTransport(new URL(served.url("remote&crash")), {
      requestInit: { headers: BEARER },
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        wire.push(headersText(res.headers));
        if (!res.headers.get("content-type")?.includes("text/event-stream"))
          wire.push(await res.clone().text());
        return res;
      },
    });
    const client = new Client({ name: "e2e-secrets", version: "1.0.0" });
    await client.connect(transport);
    const deliver = transport.onmessage;
    transport.onmessage = (m: JSONRPCMessage) => {
      wire.push(JSON.stringify(m));
      deliver?.(m);
    };
    const seen: unknown[] = [client.getServerVersion(), client.getInstructions(), await client.listTools()];
    seen.push(await client.callTool({ name: "list_server_toolsets", arguments: {} }));
    seen.push(await client.callTool({ name: "search", arguments: {} }).catch((e: Error) => e.message));
    seen.push(
      await client
        .callTool({ name: "crashy_echo", arguments: { text: "again" } })
        .catch((e: Error) => e.message),
    );
    await client.close();
    expectNoSecret("SDK client results", JSON.stringify(seen));
    expectNoSecret("SDK client wire", wire.join("\n"));
  });

  test("the debug log, through shutdown, never shows a secret", async () => {
    await served.stop();
    const log = served.stderr();
    expect(log).toMatch(/debug/);
    expect(log).toMatch(/session opened/);
    expectNoSecret("serve stderr", log);
  });
});

describe("the resource server's paths at --log-level debug (OAuth, introspection, audit with arguments)", () => {
  let as: TestIssuer;
  let served: Served;
  let audience = "";
  let jwt = "";
  const forms = () => [...FORMS, jwt, jwt.split(".")[2]!, CLIENT_SECRET];
  const clean = (where: string, text: string) => {
    expectNoSecret(where, text);
    for (const f of forms().slice(FORMS.length))
      if (text.includes(f)) throw new Error(`${where} leaks a token or client secret`);
  };
  beforeAll(async () => {
    as = await startIssuer({ audience: () => audience });
    const port = await freePort();
    audience = `http://127.0.0.1:${port}/mcp`;
    const file = tmp.file(
      "identity.yaml",
      `
auth:
  tokens:
    - { token: "\${SECRET_TOKEN}", subject: ops, scopes: [notes:read] }
  oauth:
    issuer: ${as.issuer}
    audience: ${audience}
    scopes_supported: [mcp]
    introspection: { url: "${as.issuer}/token/introspection", client_id: toolpacks, client_secret: "\${SECRET_KEY}" }
audit: { stderr: true, arguments: true }
upstreams:
  main: { command: node, args: ["${FIXTURE}", "--name", "main"] }
toolsets:
  core: { tools: [main/echo] }
  admin:
    requires: { scopes: [admin] }
    tools: [main/add]
`,
    );
    served = await serve([file, "--port", String(port), "--log-level", "debug"], SECRETS);
    jwt = await as.token({ scope: "mcp" });
  });
  afterAll(async () => {
    await served?.stop();
    await as?.close();
  });

  test("401, 403, 503, metadata, /toolsets, /metrics, a session and its audit lines never show a token or secret", async () => {
    const replies: { where: string; status: number; headers: Headers; text: string }[] = [];
    const keep = async (where: string, res: Response) => {
      replies.push({ where, status: res.status, headers: res.headers, text: await res.text() });
      return replies.at(-1)!;
    };
    const init = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "s", version: "1" } },
    });
    const postWith = (headers: Record<string, string>, url = served.url("admin")) =>
      fetch(url, { method: "POST", headers: { ...MCP_HEADERS, ...headers }, body: init });
    expect((await keep("no token", await postWith({}))).status).toBe(401);
    // An opaque token goes to introspection with the client secret, which the issuer refuses: 503, not 401.
    expect(
      (await keep("opaque", await postWith({ authorization: "Bearer opaque_Zx81KqLw5Jm3" }))).status,
    ).toBe(503);
    expect((await keep("static", await postWith(BEARER))).status).toBe(200);
    for (const path of ["/.well-known/oauth-protected-resource/mcp", "/toolsets?admin", "/metrics"])
      await keep(path, await fetch(`${served.base}${path}`, { headers: { authorization: `Bearer ${jwt}` } }));
    const url = served.url("admin");
    const { session } = await openSession(url, { headers: { authorization: `Bearer ${jwt}` } });
    const { reply } = await request(
      url,
      session,
      2,
      "tools/call",
      { name: "echo", arguments: { text: "hi" } },
      {
        headers: { authorization: `Bearer ${jwt}` },
      },
    );
    replies.push({ where: "call", ...reply });
    const other = await post(url, { jsonrpc: "2.0", id: 3, method: "ping" }, { session, headers: BEARER });
    expect(other.status).toBe(403);
    replies.push({ where: "another identity", ...other });
    for (const r of replies) {
      clean(`${r.where} headers`, headersText(r.headers));
      clean(`${r.where} body`, r.text);
    }
    await served.stop();
    const log = served.stderr();
    expect(log).toMatch(/"tool":"echo"/);
    expect(log).toMatch(/introspection failed/);
    clean("serve stderr (logs and audit lines)", log);
  });
});

describe("config errors next to a secret", () => {
  const run = async (args: string[], env: Record<string, string>) => {
    const proc = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: { ...process.env, ...env } });
    let out = "";
    proc.stdout.on("data", (c: Buffer) => {
      out += c.toString();
    });
    proc.stderr.on("data", (c: Buffer) => {
      out += c.toString();
    });
    const code = await new Promise<number | null>((ok) => proc.once("exit", ok));
    return { code, out };
  };
  const commands = (file: string) => [
    ["check", file],
    ["toolsets", file, "--json"],
    ["serve", "--port", "0", "--log-level", "debug", file],
    ["serve", "--transport", "stdio", file],
  ];

  test("an invalid url built from ${SECRET_KEY} is printed as written, never with the value", async () => {
    const file = tmp.file(
      "bad-url.yaml",
      `auth: { tokens: ["\${SECRET_TOKEN}"] }\nupstreams:\n  remote:\n    url: "notaurl-\${SECRET_KEY}"\n    headers: { Authorization: "Bearer \${SECRET_TOKEN}" }\n`,
    );
    for (const args of commands(file)) {
      const { code, out } = await run(args, SECRETS);
      expect(code, out).toBe(1);
      expect(out).toMatch(/bad-url\.yaml:4:\d+: url "notaurl-\$\{SECRET_KEY\}" is not an http\(s\) URL/);
      expectNoSecret(args.join(" "), out);
    }
  });

  test("a too-short token from the environment is never printed", async () => {
    const file = tmp.file(
      "short.yaml",
      `auth: { tokens: ["\${SECRET_TOKEN}"] }\nupstreams:\n  u: { command: node }\n`,
    );
    const short = { SECRET_TOKEN: "Zx81Kq7" };
    for (const args of commands(file)) {
      const { code, out } = await run(args, short);
      expect(code, out).toBe(1);
      expect(out).toMatch(/short\.yaml:1:\d+: an auth token must be at least 8 characters/);
      expect(out).not.toContain("Zx81Kq7");
    }
  });

  test("a prefix built from ${SECRET_KEY} is never printed resolved", async () => {
    const file = tmp.file(
      "bad-prefix.yaml",
      `upstreams:\n  u:\n    command: node\n    prefix: "\${SECRET_KEY}"\n`,
    );
    const { code, out } = await run(["check", file], { SECRET_KEY: `${SECRET_KEY} !` });
    expect(code).toBe(1);
    expectNoSecret("check of a bad prefix", out);
  });
});

describe("OAuth upstreams: tokens, client secrets, codes, verifiers and the key stay inside", () => {
  const CC_SECRET = PRE_REGISTERED.machine_secret;
  const TOKEN_KEY = randomBytes(32);
  let as: AuthServer;
  let up: Protected;
  let upUrl = "";
  let served: Served;
  const state = `${tmp.dir}/oauth-state`;
  const env = {
    ...SECRETS,
    OTHER_TOKEN: "tok_Other9Lq2Wd5Yx",
    CC_ID: PRE_REGISTERED.machine_id,
    CC_SECRET,
    TOOLPACKS_TOKEN_KEY: TOKEN_KEY.toString("base64"),
  };

  beforeAll(async () => {
    as = await startAuthServer({ resource: () => upUrl });
    up = await startProtectedServer(as.issuer);
    upUrl = up.url;
    const file = tmp.file(
      "oauth.yaml",
      `state_dir: ${state}
auth: { tokens: ["\${SECRET_TOKEN}", "\${OTHER_TOKEN}"] }
upstreams:
  mine: { url: "${upUrl}", oauth: { mode: per-user } }
  machine:
    url: "${upUrl}"
    prefix: m_
    oauth: { mode: shared, grant: client_credentials, client_id: "\${CC_ID}", client_secret: "\${CC_SECRET}" }
toolsets:
  me: { tools: [mine/whoami] }
  bot: { tools: [machine/whoami] }
`,
    );
    served = await serve([file, "--log-level", "debug"], env);
  });
  afterAll(async () => {
    await served?.stop();
    await up?.stop();
    await as?.stop();
  });

  test("nothing secret of an OAuth flow reaches a log, an answer, /toolsets, /metrics or a file in the clear", async () => {
    const shown: string[] = [];
    const client = async (token: string) => {
      const transport = new StreamableHTTPClientTransport(new URL(served.url()), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
        fetch: async (input, init) => {
          const res = await fetch(input, init);
          shown.push(headersText(res.headers), await res.clone().text());
          return res;
        },
      });
      const c = new Client({ name: "e2e-oauth-secrets", version: "1.0.0" });
      await c.connect(transport);
      return c;
    };
    const me = await client(SECRET_TOKEN);
    const err = (await me.callTool({ name: "whoami", arguments: {} }).catch((e) => e)) as {
      data: { url: string };
    };
    // The browser: toolpacks' start page, the AS, the callback; the flow's verifier read from the store meanwhile.
    const asked = await fetch(err.data.url, { redirect: "manual" });
    shown.push(headersText(asked.headers), await asked.text());
    const start = await confirmStart(err.data.url);
    const cookie = start.headers.getSetCookie()[0]!.split(";")[0]!;
    const location = new URL(start.headers.get("location")!);
    const store = await EncryptedFileTokenStore.open(state, TOKEN_KEY);
    const pending = JSON.parse(
      (await store.get(JSON.stringify(["pending", sha256Hex(location.searchParams.get("state")!)])))!,
    ) as { code_verifier: string };
    const callback = await authorizeAs(location.href, "alice-at-as");
    const code = callback.searchParams.get("code")!;
    const page = await fetch(callback, { headers: { cookie } });
    shown.push(headersText(page.headers), await page.text());
    await until(async () => (await me.listTools()).tools.some((t) => t.name === "whoami"), "whoami listed");
    shown.push(JSON.stringify(await me.callTool({ name: "whoami", arguments: {} })));
    shown.push(JSON.stringify(await me.callTool({ name: "m_whoami", arguments: {} })));
    shown.push(JSON.stringify(await me.callTool({ name: "list_server_toolsets", arguments: {} })));
    const other = await client(env.OTHER_TOKEN);
    shown.push(
      String(await other.callTool({ name: "whoami", arguments: {} }).catch((e: Error) => e.message)),
    );
    for (const path of ["/toolsets", "/metrics"])
      for (const token of [SECRET_TOKEN, env.OTHER_TOKEN]) {
        const res = await fetch(`${served.base}${path}`, { headers: { authorization: `Bearer ${token}` } });
        shown.push(headersText(res.headers), await res.text());
      }
    await me.close();
    await other.close();
    await served.stop();

    const records = new CredentialRecords(store);
    const { tokenSubject } = await import("../../src/auth/static-tokens.js");
    const mine = (await records.grant("mine", `static:${tokenSubject(SECRET_TOKEN)}`))!;
    const machine = (await records.grant("machine", ""))!;
    const registered = mine.client.slot ? await records.client(as.issuer, mine.client.slot) : undefined;
    const secrets = [
      CC_SECRET,
      TOKEN_KEY.toString("base64"),
      TOKEN_KEY.toString("hex"),
      mine.access_token,
      mine.refresh_token,
      machine.access_token,
      registered?.client_secret,
      code,
      pending.code_verifier,
      SECRET_TOKEN,
      env.OTHER_TOKEN,
    ].filter((s): s is string => !!s && s.length >= 8);
    expect(secrets.length).toBeGreaterThanOrEqual(9);
    const files = readdirSync(`${state}/oauth`).map((f) =>
      readFileSync(`${state}/oauth/${f}`).toString("latin1"),
    );
    for (const [where, text] of [
      ["serve stderr", served.stderr()],
      ["answers, pages, /toolsets and /metrics", shown.join("\n")],
      ["the token store's files", files.join("\n")],
    ] as const)
      for (const s of secrets)
        for (const form of [s, encodeURIComponent(s), Buffer.from(s).toString("base64")])
          if (text.includes(form)) throw new Error(`${where} holds a secret (${form.slice(0, 6)}…)`);
    expect(served.stderr()).toMatch(/upstream needs authorization/);
  });
});

describe("an upstream that quotes a secret back in its errors", () => {
  test("the error reaches 2025 and 2026-07-28 clients, spans and logs with the secret and the caller's credential redacted", async () => {
    const USER_KEY = "ukey_Qm73Wd0Zt5Lx";
    const spans: string[] = [];
    const receiver = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => {
        body += c.toString();
      });
      req.on("end", () => {
        spans.push(body);
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((ok) => receiver.listen(0, "127.0.0.1", ok));
    // The upstream says what it was sent, as a careless server does: in the message and in the data.
    const up = await startHttpUpstream({
      tools: {
        leak: {
          run: ({ headers }) => {
            const seen = `${headers.authorization} and key ${headers["x-api-key"]}`;
            throw new McpError(-32603, `refused: ${seen}`, { seen, nested: [{ key: headers["x-api-key"] }] });
          },
        },
      },
    });
    const own = tempDir();
    const config = own.file(
      "packs.yaml",
      `tracing: { endpoint: "http://127.0.0.1:${(receiver.address() as AddressInfo).port}" }
upstreams:
  leaky:
    url: "${up.url}"
    headers: { authorization: "Bearer \${SECRET_TOKEN}" }
    forward_headers: [x-api-key]
`,
    );
    const served = await serve(["--log-level", "debug", config], SECRETS);
    const shown: string[] = [];
    try {
      const url = served.url();
      const key = { "x-api-key": USER_KEY };
      const { session } = await openSession(url, { headers: key });
      const { answer } = await request(
        url,
        session,
        1,
        "tools/call",
        { name: "leak", arguments: {} },
        { headers: key },
      );
      const modern = await post(
        url,
        {
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: {
            name: "leak",
            arguments: {},
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientCapabilities": {},
            },
          },
        },
        {
          headers: {
            ...key,
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "leak",
          },
        },
      );
      for (const error of [answer.error, modern.messages.at(-1)?.error]) {
        // The upstream's own error, code and shape kept; what it quoted of secrets and credentials replaced.
        expect(error?.code).toBe(-32603);
        expect(error?.message).toContain("refused: Bearer ${SECRET_TOKEN} and key <x-api-key>");
        expect(error?.data).toEqual({
          seen: "Bearer ${SECRET_TOKEN} and key <x-api-key>",
          nested: [{ key: "<x-api-key>" }],
        });
        shown.push(JSON.stringify(error));
      }
    } finally {
      // Shutting down flushes the spans still batched.
      await served.stop();
      await up.close();
      await new Promise((ok) => receiver.close(ok));
      own.cleanup();
    }
    expect(spans.join("")).toContain("refused: Bearer ${SECRET_TOKEN}");
    for (const [where, text] of [
      ["answers", shown.join("\n")],
      ["spans", spans.join("\n")],
      ["serve stderr", served.stderr()],
    ] as const) {
      expectNoSecret(where, text);
      expect(text, where).not.toContain(USER_KEY);
    }
  });
});
