/**
 * The real serving core in process, through its seams: the HTTP edge driven by Web `Request`s
 * (`toolpacks.request`, no socket), the stdio edge on in-memory streams, and upstreams that are real SDK servers
 * over the SDK's in-memory transport (`upstreamTransport`: no process is spawned). Nothing is mocked.
 */
import { PassThrough } from "node:stream";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  CreateMessageResultSchema,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { compileTexts } from "../../src/catalog/load.js";
import type { Catalog } from "../../src/catalog/types.js";
import { formatConfigError } from "../../src/config/errors.js";
import { createFront } from "../../src/door/front.js";
import { createToolpacks, type Toolpacks, type ToolpacksOptions } from "../../src/index.js";
import { silentLogger } from "../../src/log.js";
import { StdioServerTransport } from "../../src/stdio-server.js";

export const V2026 = "2026-07-28";
export const V2025 = "2025-11-25";

/** Calls of the `slow` tool held until released, per server. */
interface Upstream {
  /** How many `slow` calls are waiting now. */
  readonly held: () => number;
  release(): void;
}

/**
 * An MCP server in process (SDK v1 `Server`): `echo {text}`, `add {a, b}`, `slow` (held until `release()`), and
 * `ask` (asks its client to sample during the call, then returns what it said).
 */
function fixtureServer(): { server: Server; upstream: Upstream } {
  const waiting: (() => void)[] = [];
  const server = new Server({ name: "in-process", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [
      { name: "echo", inputSchema: { type: "object", properties: { text: { type: "string" } } } },
      {
        name: "add",
        inputSchema: {
          type: "object",
          properties: { a: { type: "number" }, b: { type: "number" } },
          required: ["a", "b"],
        },
      },
      { name: "slow", inputSchema: { type: "object" } },
      { name: "ask", inputSchema: { type: "object" } },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    switch (request.params.name) {
      case "echo":
        return { content: [{ type: "text", text: String(args.text ?? "") }] };
      case "add":
        return { content: [{ type: "text", text: String(Number(args.a) + Number(args.b)) }] };
      case "slow":
        await new Promise<void>((ok) => waiting.push(ok));
        return { content: [{ type: "text", text: "slow done" }] };
      case "ask": {
        const said = await extra.sendRequest(
          { method: "sampling/createMessage", params: { messages: [], maxTokens: 5 } },
          CreateMessageResultSchema,
        );
        return { content: [{ type: "text", text: `the client said: ${JSON.stringify(said.content)}` }] };
      }
      default:
        throw new Error(`no tool ${request.params.name}`);
    }
  });
  return {
    server,
    upstream: {
      held: () => waiting.length,
      release: () => {
        for (const w of waiting.splice(0)) w();
      },
    },
  };
}

export function catalogOf(yaml: string, env: Record<string, string> = {}): Catalog {
  const r = compileTexts([{ file: "packs.yaml", text: yaml }], env);
  if (!r.ok) throw new Error(r.errors.map(formatConfigError).join("\n"));
  return r.catalog;
}

/** Every in-process server an instance was given, by upstream name (each instance gets its own). */
type Servers = Map<string, Upstream[]>;

/** The transport seam: every upstream of the config is an in-process fixture server. */
export function inMemoryUpstreams() {
  return () => {
    const { server, upstream } = fixtureServer();
    const [ours, theirs] = InMemoryTransport.createLinkedPair();
    void server.connect(theirs);
    return { ours, upstream, server };
  };
}

export interface InProcess {
  readonly toolpacks: Toolpacks;
  readonly servers: Servers;
  /** Releases every held `slow` call of every instance. */
  release(): void;
  /** Held `slow` calls of every instance. */
  held(): number;
  close(): Promise<void>;
}

/** toolpacks in process over a config whose upstreams are all fixture servers. */
export function inProcess(
  yaml: string,
  options: ToolpacksOptions = {},
  env: Record<string, string> = {},
): InProcess {
  const servers: Servers = new Map();
  const make = inMemoryUpstreams();
  const toolpacks = createToolpacks(catalogOf(yaml, env), {
    logger: false,
    ...options,
    upstreamTransport: (spec) => {
      const { ours, upstream } = make();
      servers.set(spec.name, [...(servers.get(spec.name) ?? []), upstream]);
      return ours;
    },
  });
  const all = () => [...servers.values()].flat();
  return {
    toolpacks,
    servers,
    release: () => {
      for (const u of all()) u.release();
    },
    held: () => all().reduce((n, u) => n + u.held(), 0),
    close: async () => {
      for (const u of all()) u.release();
      await toolpacks.close();
    },
  };
}

/** One JSON-RPC message's answer, from a JSON or an SSE body. */
export interface Answered {
  readonly status: number;
  readonly headers: Headers;
  readonly messages: Record<string, unknown>[];
  /** The answer to request id 1 (or the refusal), when there is one. */
  readonly answer:
    | { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } }
    | undefined;
}

async function answered(res: Response): Promise<Answered> {
  const text = await res.text();
  const type = res.headers.get("content-type") ?? "";
  const messages = type.includes("text/event-stream")
    ? text
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => JSON.parse(l.slice(5)) as Record<string, unknown>)
    : text
      ? ([JSON.parse(text)].flat() as Record<string, unknown>[])
      : [];
  const answer = (messages.find((m) => m.id === 1) ??
    messages.find((m) => "error" in m)) as Answered["answer"];
  return { status: res.status, headers: res.headers, messages, answer };
}

export interface Ask {
  readonly query?: string;
  readonly session?: string;
  readonly headers?: Record<string, string>;
  /** The peer address it comes from (per-client limits). */
  readonly address?: string;
  readonly method?: string;
  /** A body as it is (a string), instead of `message`. */
  readonly raw?: string;
}

/** A POST (or another method) to the MCP path of `tp`, in process. */
export async function post(tp: Toolpacks, message: unknown, ask: Ask = {}): Promise<Answered> {
  const res = await tp.request(
    new Request(`http://127.0.0.1/mcp${ask.query ? `?${ask.query}` : ""}`, {
      method: ask.method ?? "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(ask.session ? { "mcp-session-id": ask.session, "mcp-protocol-version": V2025 } : {}),
        ...ask.headers,
      },
      ...((ask.method ?? "POST") === "POST" ? { body: ask.raw ?? JSON.stringify(message) } : {}),
    }),
    ask.address ? { address: ask.address } : {},
  );
  return answered(res);
}

/** Opens a 2025 session: its id (or throws with the refusal). */
export async function initialize(tp: Toolpacks, ask: Ask = {}, name = "in-process"): Promise<string> {
  const r = await post(
    tp,
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: V2025, capabilities: {}, clientInfo: { name, version: "1" } },
    },
    ask,
  );
  const id = r.headers.get("mcp-session-id");
  if (!id) throw new Error(`initialize refused: ${r.status} ${JSON.stringify(r.answer)}`);
  return id;
}

/** A tools/call in a 2025 session. */
export function call2025(
  tp: Toolpacks,
  session: string,
  name: string,
  args: unknown = {},
  ask: Ask = {},
  id = 1,
) {
  return post(
    tp,
    { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } },
    { ...ask, session },
  );
}

/** One 2026-07-28 request (no session): its envelope in `_meta`, its standard headers. */
export function modern(
  tp: Toolpacks,
  method: string,
  params: Record<string, unknown> = {},
  ask: Ask & { capabilities?: Record<string, unknown> } = {},
) {
  const name = typeof params.name === "string" ? params.name : undefined;
  return post(
    tp,
    {
      jsonrpc: "2.0",
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": V2026,
          "io.modelcontextprotocol/clientCapabilities": ask.capabilities ?? {},
          "io.modelcontextprotocol/clientInfo": { name: "in-process", version: "1" },
        },
      },
    },
    {
      ...ask,
      headers: {
        "mcp-protocol-version": V2026,
        "mcp-method": method,
        ...(name ? { "mcp-name": name } : {}),
        ...ask.headers,
      },
    },
  );
}

/** The stdio edge in process: toolpacks' stdio session on in-memory streams, lines in and out. */
export async function stdioInProcess(yaml: string, query = "") {
  const servers: Servers = new Map();
  const make = inMemoryUpstreams();
  const front = createFront(
    catalogOf(yaml),
    {
      name: "toolpacks",
      version: "0",
      toolsetsTool: true,
      logger: silentLogger,
      oneClient: true,
      upstreamTransport: (spec) => {
        const { ours, upstream } = make();
        servers.set(spec.name, [...(servers.get(spec.name) ?? []), upstream]);
        return ours;
      },
    },
    { path: "/mcp", sessionIdleMs: 60_000 },
  );
  const input = new PassThrough();
  const output = new PassThrough();
  const errors: string[] = [];
  const lines: Record<string, unknown>[] = [];
  let buffered = "";
  output.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    let nl = buffered.indexOf("\n");
    while (nl >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      nl = buffered.indexOf("\n");
    }
  });
  let closed = false;
  await front.stdio(query, undefined, ({ admit }) => {
    const t = new StdioServerTransport(input, output, 1024 * 1024, admit);
    t.onerror = (e) => void errors.push(e.message);
    t.onclosed = () => {
      closed = true;
    };
    return t;
  });
  const all = () => [...servers.values()].flat();
  return {
    front,
    lines,
    errors,
    closed: () => closed,
    write: (text: string) => void input.write(text),
    send: (m: Record<string, unknown>) => void input.write(`${JSON.stringify({ jsonrpc: "2.0", ...m })}\n`),
    release: () => {
      for (const u of all()) u.release();
    },
    held: () => all().reduce((n, u) => n + u.held(), 0),
    close: async () => {
      for (const u of all()) u.release();
      input.end();
      await front.close();
    },
  };
}
