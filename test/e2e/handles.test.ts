/** Large values out of context: a 100 KB file read and written back by handle through real server-filesystem. */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type HttpUpstream, startHttpUpstream, text } from "../helpers/http-upstream.js";
import { FIXTURE, httpClient, type Served, serve, tempDir, toolNames } from "../helpers/proc.js";
import { post } from "../helpers/wire.js";

const tmp = tempDir();
const work = join(tmp.dir, "work");
const original = Array.from(
  { length: 1600 },
  (_, i) => `line ${i}: ${"ünïcødé ✓ ".repeat(4)}${i % 7 === 0 ? '{"k": [1,2,3]}' : ""}`,
).join("\n");
let served: Served;
const clients: Client[] = [];
const open = async (q = "") => {
  const c = await httpClient(served.url(q));
  clients.push(c);
  return c;
};
const bytes = (x: unknown) => Buffer.byteLength(JSON.stringify(x));

beforeAll(async () => {
  (await import("node:fs")).mkdirSync(work);
  writeFileSync(join(work, "big.txt"), original);
  const config = tmp.file(
    "packs.yaml",
    `
state: { max_session_bytes: 300000 }
upstreams:
  fs: { command: mcp-server-filesystem, args: ["${work}"] }
toolsets:
  files:
    capture: { over_bytes: 16384 }
    tools: [fs/read_text_file, fs/write_file]
  plain:
    default: false
    tools: [fs/read_text_file, fs/write_file]
`,
  );
  served = await serve([config]);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await served?.stop();
  tmp.cleanup();
});

describe("capture and handles", () => {
  test("a large file costs the model a handle, not its full size, and is written back through it", async () => {
    const c = await open();
    const tools = (await c.listTools()).tools;
    expect(tools.map((t) => t.name)).toEqual([
      "read_text_file",
      "write_file",
      "list_server_toolsets",
      "inspect_state",
    ]);
    expect(tools[0]!.description).toMatch(
      /Results over 16384 bytes come back as a handle like @state:files\/read_text_file\/1/,
    );
    const read = await c.callTool({ name: "read_text_file", arguments: { path: join(work, "big.txt") } });
    const seen = bytes(read);
    expect(seen).toBeLessThan(1024);
    const text = (read.content as { text: string }[])[0]!.text;
    expect(text).toContain("@state:files/read_text_file/1");
    const args = { path: join(work, "copy.txt"), content: "@state:files/read_text_file/1" };
    await c.callTool({ name: "write_file", arguments: args });
    expect(readFileSync(join(work, "copy.txt"))).toEqual(readFileSync(join(work, "big.txt")));

    const off = await open("only=plain");
    const plain = await off.callTool({ name: "read_text_file", arguments: { path: join(work, "big.txt") } });
    const plainSeen = bytes(plain);
    const onTotal = seen + bytes(args);
    const offTotal =
      plainSeen + bytes({ path: args.path, content: (plain.content as { text: string }[])[0]!.text });
    console.log(
      `handles: bytes the model saw for read + write of a ${Buffer.byteLength(original)}-byte file: capture on ${onTotal}, off ${offTotal} (${(offTotal / onTotal).toFixed(0)}x)`,
    );
    expect(offTotal).toBeGreaterThan(onTotal * 50);
  });

  test("a handle from one session is refused in another", async () => {
    const a = await open();
    await a.callTool({ name: "read_text_file", arguments: { path: join(work, "big.txt") } });
    const b = await open();
    const err = (await b
      .callTool({
        name: "write_file",
        arguments: { path: join(work, "stolen.txt"), content: "@state:files/read_text_file/1" },
      })
      .catch((e: unknown) => e)) as Error & { code: number };
    expect(err.code).toBe(-32602);
    expect(err.message).toMatch(/Unknown or expired handle @state:files\/read_text_file\/1/);
  });

  test("captured values stay within their budget, evicting the oldest first", async () => {
    const c = await open();
    for (let i = 0; i < 3; i++)
      await c.callTool({ name: "read_text_file", arguments: { path: join(work, "big.txt") } });
    const listed = (await c.callTool({ name: "inspect_state", arguments: {} })).structuredContent as {
      handles: { handle: string; bytes: number }[];
      total_bytes: number;
    };
    expect(listed.handles.map((h) => h.handle)).toEqual([
      "@state:files/read_text_file/2",
      "@state:files/read_text_file/3",
    ]);
    expect(listed.total_bytes).toBeLessThanOrEqual(300000);
    const evicted = (await c
      .callTool({
        name: "write_file",
        arguments: { path: join(work, "x.txt"), content: "@state:files/read_text_file/1" },
      })
      .catch((e: unknown) => e)) as Error;
    expect(evicted.message).toMatch(/expired handle @state:files\/read_text_file\/1/);
  });

  test("inspect_state returns the slice asked for, not the whole value", async () => {
    const c = await open();
    await c.callTool({ name: "read_text_file", arguments: { path: join(work, "big.txt") } });
    const r = (
      await c.callTool({
        name: "inspect_state",
        arguments: { handle: "@state:files/read_text_file/1", lines: "3-4" },
      })
    ).structuredContent as { value: string; truncated: boolean };
    expect(r.value).toBe(original.split("\n").slice(2, 4).join("\n"));
    const capped = (
      await c.callTool({
        name: "inspect_state",
        arguments: { handle: "@state:files/read_text_file/1", max_bytes: 100 },
      })
    ).structuredContent as { value: string; truncated: boolean };
    expect(Buffer.byteLength(capped.value)).toBeLessThanOrEqual(100);
    expect(capped.truncated).toBe(true);
    expect(await toolNames(c)).toContain("inspect_state");
  });
});

describe("2026-07-28 callers' handles", () => {
  const own = tempDir();
  let up: HttpUpstream;
  let modern: Served;
  beforeAll(async () => {
    up = await startHttpUpstream({
      tools: {
        big: { run: () => text("x".repeat(500)) },
        echo: {
          inputSchema: { type: "object", properties: { text: { type: "string" } } },
          run: ({ args }) => text(String(args.text)),
        },
      },
    });
    const config = own.file(
      "packs.yaml",
      `
upstreams:
  web: { url: "${up.url}", forward_headers: [x-api-key], capture: { over_bytes: 100 } }
  main: { command: node, args: ["${FIXTURE}", "--tools", "echo"] }
toolsets:
  web: { tools: [web/big] }
  main: { tools: [main/echo] }
`,
    );
    modern = await serve([config]);
  });
  afterAll(async () => {
    await modern?.stop();
    await up?.close();
    own.cleanup();
  });

  /** One 2026-07-28 tools/call on `query`, with these credential headers; its answer message. */
  async function call(
    query: string,
    name: string,
    args: Record<string, unknown>,
    headers: Record<string, string>,
  ) {
    const reply = await post(
      modern.url(query),
      {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: {
          name,
          arguments: args,
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
          },
        },
      },
      {
        headers: {
          ...headers,
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "tools/call",
          "mcp-name": name,
        },
      },
    );
    return reply.messages.at(-1)!;
  }

  test("a value captured for a forward_headers credential is that credential's on its next request, on any selection, and nobody else's", async () => {
    const alice = { "x-api-key": "alice-key-4821" };
    const captured = await call("only=web", "big", {}, alice);
    const handle = (captured.result as { _meta: { "toolpacks/handle": { handle: string } } })._meta[
      "toolpacks/handle"
    ].handle;
    expect(handle).toMatch(/^@state:web\/big\/[A-Za-z0-9_-]{22}$/);
    // Its next request, on a selection whose upstreams read no credential: the value is still hers.
    const used = await call("only=main", "echo", { text: handle }, alice);
    expect(used.error, JSON.stringify(used.error)).toBeUndefined();
    expect(used.result).toMatchObject({ content: [{ text: "x".repeat(500) }] });
    const others: Record<string, string>[] = [{ "x-api-key": "bob-key-7310" }, {}];
    for (const someone of others) {
      const refused = await call("only=main", "echo", { text: handle }, someone);
      expect(refused.error?.code).toBe(-32602);
      expect(refused.error?.message).toMatch(/Unknown or expired handle/);
    }
  });
});
