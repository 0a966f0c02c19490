/**
 * The limits of SPEC §7.6 hold for 2026-07-28 requests too (they have no session; a context serves each selection
 * and credential): requests in flight on one context, the per-client instance start rate against made-up
 * credential values, and the body bound's 413. Clients come from different loopback addresses.
 */
import { describe, expect, test } from "vitest";
import { fetchFrom } from "../helpers/from.js";
import { perTest } from "../helpers/harness.js";
import { FIXTURE, type Served } from "../helpers/proc.js";
import { type Fetch, post, type Reply } from "../helpers/wire.js";

const V = "2026-07-28";
const { cleanups, start: serveYaml } = perTest();

const CONFIG = `
limits: { requests_per_session: 2, instances_per_minute: 3 }
upstreams:
  main: { command: node, args: ["${FIXTURE}", "--tools", "echo,slow"] }
  cred: { command: node, args: ["${FIXTURE}", "--tools", "echo"], prefix: c_, header_env: { x-api-key: API_KEY } }
toolsets:
  main: { tools: [main/echo, main/slow] }
  cred: { default: false, tools: [cred/echo] }
`;

const start = (args: string[] = []): Promise<Served> => serveYaml(CONFIG, args);

const from2 = fetchFrom("127.0.0.2");
const from3 = fetchFrom("127.0.0.3");

/** A 2026-07-28 request (its envelope in `_meta`, its method and name in headers). */
function modernRequest(id: number, method: string, params: Record<string, unknown> = {}) {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": V,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
    ...(params._meta as object | undefined),
  };
  return { jsonrpc: "2.0", id, method, params: { ...params, _meta: meta } };
}

function modernHeaders(method: string, name?: string, extra: Record<string, string> = {}) {
  return { "mcp-protocol-version": V, "mcp-method": method, ...(name ? { "mcp-name": name } : {}), ...extra };
}

const call = (
  url: string,
  id: number,
  name: string,
  args: Record<string, unknown>,
  options: { fetch?: Fetch; headers?: Record<string, string>; progress?: boolean } = {},
): Promise<Reply> =>
  post(
    url,
    modernRequest(id, "tools/call", {
      name,
      arguments: args,
      ...(options.progress ? { _meta: { progressToken: id } } : {}),
    }),
    {
      headers: modernHeaders("tools/call", name, options.headers),
      ...(options.fetch ? { fetch: options.fetch } : {}),
    },
  );

describe("2026-07-28 requests are bounded like sessions", () => {
  test("a 2026-07-28 context past limits.requests_per_session gets 429 naming the limit; another context is served", async () => {
    const served = await start();
    const url = served.url();
    const abort = new AbortController();
    cleanups.push(async () => abort.abort());
    // Two slow calls with progress: each answer turns into a stream at its first progress, so both are in flight.
    const slow = (id: number) =>
      fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...modernHeaders("tools/call", "slow"),
        },
        body: JSON.stringify(
          modernRequest(id, "tools/call", {
            name: "slow",
            arguments: { ms: 30_000, steps: 30 },
            _meta: { progressToken: id },
          }),
        ),
        signal: abort.signal,
      });
    const streams = await Promise.all([slow(1), slow(2)]);
    for (const s of streams) expect(s.headers.get("content-type")).toMatch(/text\/event-stream/);
    const third = await call(url, 3, "echo", { text: "third" });
    expect(third.status).toBe(429);
    expect(third.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(third.messages[0]?.error?.code).toBe(-32000);
    expect(third.messages[0]?.error?.message).toMatch(/at most 2 may be \(limits\.requests_per_session\)/);
    // Another context (another selection, with credentials) is not held back.
    const other = await call(
      served.url("only=cred"),
      4,
      "c_echo",
      { text: "other" },
      {
        headers: { "x-api-key": "k" },
      },
    );
    expect(other.status).toBe(200);
    expect(other.messages[0]?.error).toBeUndefined();
  });

  test("made-up credential values on 2026-07-28 requests start instances at most limits.instances_per_minute; another client is served", async () => {
    const served = await start();
    const url = served.url("only=cred");
    for (let i = 0; i < 3; i++) {
      const ok = await call(
        url,
        i + 1,
        "c_echo",
        { text: "hi" },
        { fetch: from2, headers: { "x-api-key": `made-up-${i}` } },
      );
      expect(ok.status).toBe(200);
      expect(ok.messages[0]?.error).toBeUndefined();
    }
    const refused = await call(
      url,
      9,
      "c_echo",
      { text: "hi" },
      { fetch: from2, headers: { "x-api-key": "made-up-9" } },
    );
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refused.messages[0]?.error?.code).toBe(-32000);
    expect(refused.messages[0]?.error?.message).toMatch(/limits\.instances_per_minute: 3/);
    // A value already started needs no new instance; another client has a bucket of its own.
    const again = await call(
      url,
      10,
      "c_echo",
      { text: "hi" },
      { fetch: from2, headers: { "x-api-key": "made-up-0" } },
    );
    expect(again.status).toBe(200);
    const theirs = await call(
      url,
      11,
      "c_echo",
      { text: "hi" },
      { fetch: from3, headers: { "x-api-key": "real" } },
    );
    expect(theirs.status).toBe(200);
  });

  test("a 2026-07-28 request over --max-body-bytes gets a 413 a fetch client reads", async () => {
    const served = await start(["--max-body-bytes", "2000"]);
    const big = await call(served.url(), 1, "echo", { text: "x".repeat(10_000) });
    expect(big.status).toBe(413);
    const small = await call(served.url(), 2, "echo", { text: "fits" });
    expect(small.status).toBe(200);
  });
});
