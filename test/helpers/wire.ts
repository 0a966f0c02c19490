/** A lean MCP client over plain fetch: raw status, headers and bodies, JSON or SSE answers, no SDK in between. */
import { request as httpRequest } from "node:http";

const PROTOCOL_VERSION = "2025-11-25";

export const MCP_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": PROTOCOL_VERSION,
});

export type Fetch = (input: string, init: RequestInit) => Promise<Response>;

interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

export interface Message {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  result?: unknown;
  error?: RpcError;
}

export interface Reply {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The JSON-RPC messages of the body: a JSON object or array, or the data of every SSE event. */
  readonly messages: Message[];
}

export interface PostOptions {
  readonly session?: string;
  readonly headers?: Record<string, string>;
  readonly fetch?: Fetch;
  readonly signal?: AbortSignal;
}

/** Parses an answer body, whichever way it came; throws on a body that is neither JSON nor SSE. */
export function messagesOf(contentType: string | null, text: string): Message[] {
  if (!text) return [];
  if (contentType?.includes("text/event-stream")) {
    const out: Message[] = [];
    for (const event of text.split(/\r?\n\r?\n/)) {
      const data = event
        .split(/\r?\n/)
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).replace(/^ /, ""))
        .join("\n");
      if (data) out.push(JSON.parse(data) as Message);
    }
    return out;
  }
  const parsed = JSON.parse(text) as Message | Message[];
  return Array.isArray(parsed) ? parsed : [parsed];
}

/** POSTs a body (a string is sent as is, anything else as JSON) to the MCP URL. */
export async function post(url: string, body: unknown, options: PostOptions = {}): Promise<Reply> {
  const res = await (options.fetch ?? fetch)(url, {
    method: "POST",
    headers: {
      ...MCP_HEADERS,
      ...(options.session ? { "mcp-session-id": options.session } : {}),
      ...options.headers,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    text,
    messages: messagesOf(res.headers.get("content-type"), text),
  };
}

export const initializeRequest = (id: number | string = 0) => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: {
    protocolVersion: PROTOCOL_VERSION,
    capabilities: {},
    clientInfo: { name: "wire", version: "1.0.0" },
  },
});

/** initialize, then notifications/initialized: returns the session id. */
export async function openSession(
  url: string,
  options: Omit<PostOptions, "session"> = {},
): Promise<{ session: string; init: Reply }> {
  const init = await post(url, initializeRequest(), options);
  const session = init.headers.get("mcp-session-id");
  if (init.status !== 200 || !session) throw new Error(`initialize failed: ${init.status} ${init.text}`);
  const ack = await post(
    url,
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { ...options, session },
  );
  if (ack.status !== 202) throw new Error(`notifications/initialized: ${ack.status} ${ack.text}`);
  return { session, init };
}

/** One request in a session; returns its single answer message (and the raw reply). */
export async function request(
  url: string,
  session: string,
  id: number | string,
  method: string,
  params: Record<string, unknown> = {},
  options: Omit<PostOptions, "session"> = {},
): Promise<{ reply: Reply; answer: Message }> {
  const reply = await post(url, { jsonrpc: "2.0", id, method, params }, { ...options, session });
  const answer = reply.messages.find((m) => m.id === id && ("result" in m || "error" in m));
  if (!answer) throw new Error(`no answer to ${method} #${id}: ${reply.status} ${reply.text.slice(0, 300)}`);
  return { reply, answer };
}

export async function closeSession(
  url: string,
  session: string,
  options: Omit<PostOptions, "session"> = {},
): Promise<number> {
  const res = await (options.fetch ?? fetch)(url, {
    method: "DELETE",
    headers: { "mcp-session-id": session, "mcp-protocol-version": PROTOCOL_VERSION, ...options.headers },
  });
  await res.arrayBuffer();
  return res.status;
}

/** Runs `task(i)` for i in [0, n) with at most `limit` at once; resolves with every result in order. */
export async function pooled<T>(n: number, limit: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out = new Array<T>(n);
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      out[i] = await task(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, n) }, worker));
  return out;
}

/** The status of a POST of `body` to `url` with headers fetch will not send (a forged Host), over node:http. */
export function rawStatus(url: string, headers: Record<string, string>, body: unknown): Promise<number> {
  const u = new URL(url);
  return new Promise<number>((ok, fail) => {
    const req = httpRequest(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers,
        },
      },
      (res) => {
        res.resume();
        ok(res.statusCode ?? 0);
      },
    );
    req.on("error", fail);
    req.end(JSON.stringify(body));
  });
}
