/**
 * Identity for MCP 2026-07-28 clients, through the real CLI: there is no session, so every request is
 * authenticated on its own, its principal narrows the URL's selection, and the context that serves it is
 * keyed by its identity: two subjects never share one (nor its audit subject, handles or request states).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { FIXTURE, type Served, serve, tempDir, until } from "../helpers/proc.js";
import { freePort } from "../helpers/redis.js";

const V = "2026-07-28";
const TOKENS = {
  ALICE_TOKEN: "alice-static-token-7f3a",
  BOB_TOKEN: "bob-static-token-91c2",
  ROOT_TOKEN: "root-static-token-44d8",
};
const tmp = tempDir();
const audit = join(tmp.dir, "audit.jsonl");
let served: Served;

beforeAll(async () => {
  const port = await freePort();
  const config = tmp.file(
    "packs.yaml",
    `
auth:
  tokens:
    - { token: "\${ALICE_TOKEN}", subject: alice, scopes: [mcp] }
    - { token: "\${BOB_TOKEN}", subject: bob, scopes: [mcp] }
    - { token: "\${ROOT_TOKEN}", subject: root, scopes: [mcp, admin] }
  oauth:
    issuer: http://127.0.0.1:9/
    audience: http://127.0.0.1:${port}/mcp
    scopes_supported: [mcp]
audit: { file: ${JSON.stringify(audit)}, arguments: true }
upstreams:
  fx: { command: node, args: ["${FIXTURE}"] }
  every: { command: mcp-server-everything, isolation: per-session, prefix: e_ }
toolsets:
  notes: { tools: [fx/echo] }
  admin:
    requires: { scopes: [admin] }
    tools: [fx/add]
  every: { default: false, tools: [every/trigger-elicitation-request] }
`,
  );
  served = await serve([config, "--port", String(port)], TOKENS);
});
afterAll(async () => {
  await served?.stop();
  tmp.cleanup();
});

/** One raw 2026-07-28 POST (no session); `token` becomes its bearer. */
async function modern(
  method: string,
  params: Record<string, unknown>,
  token?: string,
  options: { query?: string; capabilities?: Record<string, unknown> } = {},
) {
  const name = params.name as string | undefined;
  const res = await fetch(served.url(options.query), {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": V,
      "mcp-method": method,
      ...(name ? { "mcp-name": name } : {}),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": V,
          "io.modelcontextprotocol/clientCapabilities": options.capabilities ?? {},
          "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
        },
      },
    }),
  });
  const text = await res.text();
  const data = (res.headers.get("content-type") ?? "").includes("text/event-stream")
    ? text
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => JSON.parse(l.slice(5)) as Record<string, unknown>)
    : text
      ? [JSON.parse(text) as Record<string, unknown>]
      : [];
  const answer = data.find((m) => m.id === 1) as
    | { result?: Record<string, unknown>; error?: { code: number; message: string } }
    | undefined;
  return { status: res.status, headers: res.headers, answer };
}

const toolNames = (r: Awaited<ReturnType<typeof modern>>) =>
  ((r.answer?.result?.tools as { name: string }[] | undefined) ?? []).map((t) => t.name);

function auditLines(): Record<string, unknown>[] {
  let text = "";
  try {
    text = readFileSync(audit, "utf8");
  } catch {}
  return text
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe("2026-07-28 requests carry their own identity", () => {
  test("a 2026-07-28 request without a token gets 401 pointing at the resource metadata", async () => {
    const res = await modern("tools/list", {});
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe(
      `Bearer resource_metadata="${served.base}/.well-known/oauth-protected-resource/mcp", scope="mcp"`,
    );
    const wrong = await modern("tools/list", {}, "not-a-token-of-ours");
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });

  test("each 2026-07-28 request's principal narrows the URL's selection", async () => {
    expect(toolNames(await modern("tools/list", {}, TOKENS.ROOT_TOKEN))).toEqual([
      "echo",
      "add",
      "list_server_toolsets",
    ]);
    expect(toolNames(await modern("tools/list", {}, TOKENS.ALICE_TOKEN))).toEqual([
      "echo",
      "list_server_toolsets",
    ]);
    const denied = await modern("tools/call", { name: "add", arguments: { a: 1, b: 2 } }, TOKENS.ALICE_TOKEN);
    expect(JSON.stringify(denied.answer)).toContain("Unknown tool: add");
  });

  test("an answer that depends on the caller's grants is never marked shareable: lists and server/discover are private where a toolset is gated", async () => {
    // Before, tools/list, server/discover and resources/templates/list carried cacheScope "public" for 60 s:
    // root's list holds the admin toolset and alice's does not, so a shared cache must never reuse either.
    for (const token of [TOKENS.ROOT_TOKEN, TOKENS.ALICE_TOKEN]) {
      for (const method of ["tools/list", "server/discover", "resources/templates/list"]) {
        const r = await modern(method, {}, token);
        expect(r.answer?.result, `${method}`).toMatchObject({ cacheScope: "private" });
      }
    }
  });

  test("one subject's 2026-07-28 request never lands in another subject's context", async () => {
    // alice and bob have the same grants and the same URL: only their identity tells their contexts apart.
    for (const [who, token] of [
      ["alice", TOKENS.ALICE_TOKEN],
      ["bob", TOKENS.BOB_TOKEN],
      ["alice", TOKENS.ALICE_TOKEN],
    ] as const) {
      const r = await modern("tools/call", { name: "echo", arguments: { text: `ctx-${who}` } }, token);
      expect(r.status).toBe(200);
      expect(r.answer?.result).toMatchObject({ resultType: "complete" });
    }
    const lines = await until(() => {
      const found = auditLines().filter((l) =>
        String((l.arguments as { text?: string } | undefined)?.text).startsWith("ctx-"),
      );
      return found.length === 3 ? found : undefined;
    }, "three audit lines");
    // The context that served each call is its caller's: the audit subject is the caller's own.
    for (const l of lines) expect(`ctx-${l.subject}`).toBe((l.arguments as { text: string }).text);
    // Two contexts open for the selection notes (alice's, bob's), however many requests they made.
    const metrics = await (
      await fetch(`${served.base}/metrics`, { headers: { authorization: `Bearer ${TOKENS.ROOT_TOKEN}` } })
    ).text();
    expect(metrics).toMatch(/^toolpacks_sessions\{selection="notes"\} 2$/m);
  });

  test("a requestState made for one subject is refused to another, and still completes for its own", async () => {
    const options = { query: "only=every", capabilities: { elicitation: { form: {} } } };
    const call = { name: "e_trigger-elicitation-request", arguments: {} };
    const first = await modern("tools/call", call, TOKENS.ALICE_TOKEN, options);
    expect(first.answer?.result).toMatchObject({ resultType: "input_required" });
    const { inputRequests, requestState } = first.answer!.result as {
      inputRequests: Record<string, unknown>;
      requestState: string;
    };
    const retry = (token: string) =>
      modern(
        "tools/call",
        {
          ...call,
          inputResponses: {
            [Object.keys(inputRequests)[0]!]: { action: "accept", content: { name: "Ada", color: "red" } },
          },
          requestState,
        },
        token,
        options,
      );
    expect((await retry(TOKENS.BOB_TOKEN)).answer?.error?.code).toBe(-32602);
    expect(JSON.stringify((await retry(TOKENS.ALICE_TOKEN)).answer?.result)).toContain("Name: Ada");
  });
});
