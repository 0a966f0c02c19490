/**
 * Connections to an HTTP upstream are a resource no client can take from the others (SPEC §7.6): each instance has
 * connections of its own (max_connections), and one client's calls open on one instance are bounded to a quarter
 * of them, a call parked for its retry included. Real CLI, a real SDK server over HTTP, clients from different
 * loopback addresses. Before, every HTTP instance of the process shared one pool of 64 connections per origin.
 */
import { describe, expect, test } from "vitest";
import { fetchFrom } from "../helpers/from.js";
import { perTest } from "../helpers/harness.js";
import { type HttpUpstream, sleep, startHttpUpstream, text } from "../helpers/http-upstream.js";
import { type Message, openSession, post, request } from "../helpers/wire.js";

const { cleanups, start } = perTest();
const V = "2026-07-28";
const [fromA, fromB] = [fetchFrom("127.0.0.2"), fetchFrom("127.0.0.3")];

/** An upstream whose `slow` keeps its call open (progress each second keeps it past call_timeout). */
async function upstream(): Promise<HttpUpstream & { running(): number }> {
  let running = 0;
  const up = await startHttpUpstream({
    tools: {
      echo: { run: ({ args }) => text(String(args.text ?? "")) },
      slow: {
        run: async ({ signal, progress }) => {
          running++;
          try {
            for (let i = 0; i < 120 && !signal.aborted; i++) {
              await progress(i);
              await sleep(1000, signal);
            }
          } catch {
          } finally {
            running--;
          }
          return text("slept");
        },
      },
      ask: { run: async ({ elicit }) => text(JSON.stringify(await elicit("who are you?"))) },
    },
  });
  cleanups.push(() => up.close());
  return { ...up, running: () => running };
}

/** Polls until `f` holds (every 50 ms, at most `ms`). */
async function until(f: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error("condition not reached in time");
    await sleep(50);
  }
}

const limitOf = (m: Message | undefined) => (m?.error?.data as { limit?: string } | undefined)?.limit;

function modernCall(id: number, name: string, args: Record<string, unknown>, capabilities = {}) {
  return {
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: {
      name,
      arguments: args,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
      },
    },
  };
}
const modernHeaders = (name: string) => ({
  "mcp-protocol-version": V,
  "mcp-method": "tools/call",
  "mcp-name": name,
});

describe("connections to an HTTP upstream", () => {
  test("one client's 64 slow calls leave another client's call its connection: it is answered, not timed out", async () => {
    const up = await upstream();
    // call_timeout 4: a call that found no connection would fail with -32001 after 4 s (A's calls send progress).
    const served = await start(`upstreams:\n  web: { url: "${up.url}", call_timeout: 4 }\n`);
    const url = served.url();
    const a = await openSession(url, { fetch: fromA });
    const stop = new AbortController();
    cleanups.push(async () => stop.abort());
    const answered: Message[] = [];
    for (let i = 0; i < 64; i++) {
      void post(
        url,
        {
          jsonrpc: "2.0",
          id: 10 + i,
          method: "tools/call",
          params: { name: "slow", arguments: {}, _meta: { progressToken: i } },
        },
        { session: a.session, fetch: fromA, signal: stop.signal },
      ).then(
        (r) => answered.push(...r.messages.filter((m) => m.id === 10 + i)),
        () => {},
      );
    }
    // A holds as many calls as it may (16, a quarter of max_connections); the rest are refused at once.
    await until(() => up.running() >= 16);
    await sleep(1000);
    const b = await openSession(url, { fetch: fromB });
    const { answer } = await request(
      url,
      b.session,
      1,
      "tools/call",
      { name: "echo", arguments: { text: "B" } },
      {
        fetch: fromB,
      },
    );
    expect(answer.error, JSON.stringify(answer.error)).toBeUndefined();
    expect(answer.result).toMatchObject({ content: [{ text: "B" }] });
    expect(up.running()).toBe(16);
    await until(() => answered.length >= 48);
    expect(answered.filter((m) => limitOf(m) === "upstream_calls_per_client")).toHaveLength(48);
  });

  test("63 anonymous 2026-07-28 calls parked for their retry never take another anonymous caller's connection", async () => {
    const up = await upstream();
    const served = await start(`upstreams:\n  web: { url: "${up.url}", protocol: "2025" }\n`);
    const url = served.url();
    const parked = await Promise.all(
      Array.from({ length: 63 }, (_, i) =>
        post(url, modernCall(100 + i, "ask", {}, { elicitation: {} }), {
          headers: modernHeaders("ask"),
          fetch: fromA,
        }),
      ),
    );
    const answers = parked.map((r) => r.messages.at(-1));
    const asked = answers.filter(
      (m) => (m?.result as { resultType?: string })?.resultType === "input_required",
    );
    expect(asked).toHaveLength(16);
    expect(answers.filter((m) => limitOf(m) === "upstream_calls_per_client")).toHaveLength(47);
    // B shares A's context (same selection, no credentials) but is another client: its call has a connection.
    const reply = await post(url, modernCall(1, "echo", { text: "B" }), {
      headers: modernHeaders("echo"),
      fetch: fromB,
      signal: AbortSignal.timeout(20_000),
    });
    const answer = reply.messages.at(-1);
    expect(answer?.error, JSON.stringify(answer?.error)).toBeUndefined();
    expect(answer?.result).toMatchObject({ content: [{ text: "B" }] });
  });

  test("64 per-credential instances, each holding its GET stream, leave the shared instance connections of its own", async () => {
    const up = await upstream();
    const served = await start(
      `limits: { instances_per_minute: 1000 }
upstreams:
  web: { url: "${up.url}", forward_headers: [x-api-key], max_instances: 64, connect_timeout: 5, call_timeout: 5 }
`,
    );
    const url = served.url();
    for (let i = 0; i < 64; i++) {
      const s = await openSession(url, { headers: { "x-api-key": `key-${i}` } });
      const { answer } = await request(
        url,
        s.session,
        1,
        "tools/call",
        { name: "echo", arguments: { text: `${i}` } },
        {
          headers: { "x-api-key": `key-${i}` },
        },
      );
      expect(answer.result, `instance ${i}: ${JSON.stringify(answer.error)}`).toMatchObject({
        content: [{ text: `${i}` }],
      });
    }
    // The shared instance (warm at boot) and the 64 of the credentials, each with its GET stream open.
    expect(up.initializes()).toBe(65);
    expect(up.connections()).toBeGreaterThanOrEqual(65);
    const shared = await openSession(url);
    const { answer } = await request(url, shared.session, 1, "tools/call", {
      name: "echo",
      arguments: { text: "shared" },
    });
    expect(answer.error, JSON.stringify(answer.error)).toBeUndefined();
    expect(answer.result).toMatchObject({ content: [{ text: "shared" }] });
  });
});
