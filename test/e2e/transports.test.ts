/**
 * One call path: the same cases over Streamable HTTP and over stdio, on the wire (raw JSON-RPC), so that what
 * one transport does the other does too: request id 0, cancellation, progress, errors.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { readEvents, waitForEvent } from "../helpers/mcp.js";
import { CLI, FIXTURE, ROOT, type Served, serve, tempDir } from "../helpers/proc.js";

type Msg = {
  jsonrpc: "2.0";
  id?: number | string;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
};

interface Wire {
  /** Sends a message; a request's answer (and what rides with it) arrives in `received`. */
  send(m: Omit<Msg, "jsonrpc">): void;
  readonly received: Msg[];
  next(match: (m: Msg) => boolean, what: string): Promise<Msg>;
  close(): Promise<void>;
}

const tmp = tempDir();
const events = join(tmp.dir, "fixture.events");
const config = tmp.file(
  "packs.yaml",
  `
upstreams:
  fx:
    command: node
    args: ["${FIXTURE}", "--events-file", "${events}"]
`,
);
const INIT = {
  protocolVersion: "2025-11-25",
  capabilities: {},
  clientInfo: { name: "raw", version: "1" },
};

function waiter(received: Msg[]) {
  const waiters = new Set<() => void>();
  const push = (m: Msg) => {
    received.push(m);
    for (const w of [...waiters]) w();
  };
  const next = (match: (m: Msg) => boolean, what: string) =>
    new Promise<Msg>((ok, fail) => {
      const check = () => {
        const hit = received.find(match);
        if (!hit) return false;
        waiters.delete(check as () => void);
        clearTimeout(timer);
        ok(hit);
        return true;
      };
      const timer = setTimeout(() => {
        waiters.delete(check as () => void);
        fail(new Error(`no ${what}; received ${JSON.stringify(received)}`));
      }, 20_000);
      if (!check()) waiters.add(check as () => void);
    });
  return { push, next };
}

async function httpWire(served: Served): Promise<Wire> {
  const received: Msg[] = [];
  const { push, next } = waiter(received);
  let session: string | undefined;
  const post = async (m: Omit<Msg, "jsonrpc">) => {
    const res = await fetch(served.url(), {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(session ? { "mcp-session-id": session } : {}),
      },
      body: JSON.stringify({ jsonrpc: "2.0", ...m }),
    });
    session ??= res.headers.get("mcp-session-id") ?? undefined;
    const text = await res.text();
    if ((res.headers.get("content-type") ?? "").includes("text/event-stream")) {
      for (const line of text.split("\n")) if (line.startsWith("data:")) push(JSON.parse(line.slice(5)));
    } else if (text) push(JSON.parse(text));
  };
  await post({ id: "init", method: "initialize", params: INIT });
  await post({ method: "notifications/initialized" });
  return {
    received,
    send: (m) => void post(m),
    next,
    close: async () => {
      if (session) await fetch(served.url(), { method: "DELETE", headers: { "mcp-session-id": session } });
    },
  };
}

async function stdioWire(): Promise<Wire> {
  const received: Msg[] = [];
  const { push, next } = waiter(received);
  const proc: ChildProcess = spawn(process.execPath, [CLI, "serve", "--transport", "stdio", config], {
    cwd: ROOT,
    stdio: ["pipe", "pipe", "ignore"],
  });
  let buffer = "";
  proc.stdout!.on("data", (c: Buffer) => {
    buffer += c.toString();
    let nl = buffer.indexOf("\n");
    while (nl >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (line.trim()) push(JSON.parse(line));
      nl = buffer.indexOf("\n");
    }
  });
  const send = (m: Omit<Msg, "jsonrpc">) =>
    void proc.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", ...m })}\n`);
  send({ id: "init", method: "initialize", params: INIT });
  await next((m) => m.id === "init", "the initialize answer");
  send({ method: "notifications/initialized" });
  return {
    received,
    send,
    next,
    close: async () => {
      proc.stdin!.end();
      await new Promise((r) => proc.once("exit", r));
    },
  };
}

let served: Served;
beforeAll(async () => {
  served = await serve([config]);
});
afterAll(async () => {
  await served?.stop();
  tmp.cleanup();
});

describe.each([
  ["Streamable HTTP", () => httpWire(served)],
  ["stdio", () => stdioWire()],
])("over %s", (_name, open) => {
  test("a request of id 0 is answered under id 0", async () => {
    const w = await open();
    try {
      w.send({ id: 0, method: "tools/call", params: { name: "echo", arguments: { text: "zero" } } });
      const a = await w.next((m) => m.id === 0, "the answer to id 0");
      expect(a.result?.content).toEqual([{ type: "text", text: "zero" }]);
    } finally {
      await w.close();
    }
  });

  test("a cancelled request of id 0 stops upstream and is not answered", async () => {
    const w = await open();
    const count = (match: (e: Record<string, unknown>) => boolean) => readEvents(events).filter(match).length;
    const isSlow = (e: Record<string, unknown>) => e.event === "call" && e.tool === "slow";
    const isCancelled = (e: Record<string, unknown>) => e.event === "cancelled";
    const [slowBefore, cancelledBefore] = [count(isSlow), count(isCancelled)];
    try {
      w.send({ id: 0, method: "tools/call", params: { name: "slow", arguments: { ms: 30_000 } } });
      await waitForEvent(events, () => count(isSlow) > slowBefore, "the slow call upstream");
      w.send({ method: "notifications/cancelled", params: { requestId: 0, reason: "no longer needed" } });
      await waitForEvent(events, () => count(isCancelled) > cancelledBefore, "the upstream's cancellation");
      w.send({ id: 1, method: "ping" });
      await w.next((m) => m.id === 1, "the ping answer");
      expect(w.received.filter((m) => m.id === 0)).toEqual([]);
    } finally {
      await w.close();
    }
  });

  test("progress comes back under the client's token, every notification, then the result", async () => {
    const w = await open();
    try {
      w.send({
        id: 7,
        method: "tools/call",
        params: {
          name: "slow",
          arguments: { ms: 300, steps: 3, tailMs: 0 },
          _meta: { progressToken: "mine" },
        },
      });
      await w.next((m) => m.id === 7, "the answer");
      const progress = w.received.filter((m) => m.method === "notifications/progress").map((m) => m.params);
      expect(progress.map((p) => [p?.progressToken, p?.progress])).toEqual([
        ["mine", 1],
        ["mine", 2],
        ["mine", 3],
      ]);
    } finally {
      await w.close();
    }
  });

  test("errors keep their code and data: an unknown tool, an upstream's own error, an unknown method", async () => {
    const w = await open();
    try {
      w.send({ id: 1, method: "tools/call", params: { name: "nope", arguments: {} } });
      w.send({ id: 2, method: "tools/call", params: { name: "throw", arguments: {} } });
      w.send({ id: 3, method: "tasks/list" });
      const [a, b, c] = await Promise.all([1, 2, 3].map((id) => w.next((m) => m.id === id, `answer ${id}`)));
      expect(a!.error).toMatchObject({ code: -32602, message: "Unknown tool: nope" });
      expect(b!.error).toMatchObject({ code: -32042, data: { detail: 42 } });
      expect(c!.error).toMatchObject({ code: -32601 });
    } finally {
      await w.close();
    }
  });
});
