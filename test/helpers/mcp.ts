/** SDK clients that record every message on the wire, for tests that must count what the SDK itself drops. */
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { ClientCapabilities, JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

type Wire = JSONRPCMessage & { method?: string; params?: Record<string, unknown>; id?: unknown };

export interface Recorded {
  readonly client: Client;
  /** Everything the server sent this client, in arrival order (transport level: nothing is dropped). */
  readonly received: Wire[];
  /** Everything this client sent. */
  readonly sent: Wire[];
  /** Resolves once the standalone GET stream is open: messages tied to no request can reach the client. */
  readonly streamOpen: Promise<void>;
  /** Received notifications of one method, in order. */
  notifications(method: string): Record<string, unknown>[];
  /** The first received message (already here or still to come) that matches. */
  waitFor(match: (m: Wire) => boolean, what: string, timeoutMs?: number): Promise<Wire>;
  close(): Promise<void>;
}

export interface RecordedOptions {
  readonly capabilities?: ClientCapabilities;
  /** Registers request handlers (sampling, elicitation, roots) before the client connects. */
  readonly setup?: (client: Client) => void;
  readonly name?: string;
}

export async function recordedClient(url: string, options: RecordedOptions = {}): Promise<Recorded> {
  const client = new Client(
    { name: options.name ?? "e2e-recorded", version: "1.0.0" },
    { capabilities: options.capabilities ?? {} },
  );
  options.setup?.(client);
  let opened!: () => void;
  const streamOpen = new Promise<void>((ok) => {
    opened = ok;
  });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: async (input, init) => {
      const res = await fetch(input, init);
      if (init?.method === "GET" && res.ok) opened();
      return res;
    },
  });
  const received: Wire[] = [];
  const sent: Wire[] = [];
  const waiters = new Set<(m: Wire) => void>();
  await client.connect(transport);
  const deliver = transport.onmessage;
  transport.onmessage = (message: JSONRPCMessage) => {
    received.push(message as Wire);
    for (const w of [...waiters]) w(message as Wire);
    deliver?.(message);
  };
  const send = transport.send.bind(transport);
  transport.send = (message, opts) => {
    sent.push(message as Wire);
    return send(message, opts);
  };
  return {
    client,
    received,
    sent,
    streamOpen,
    notifications: (method) =>
      received.filter((m) => m.method === method && !("id" in m)).map((m) => m.params ?? {}),
    waitFor: (match, what, timeoutMs = 20_000) =>
      new Promise<Wire>((ok, fail) => {
        const hit = received.find(match);
        if (hit) {
          ok(hit);
          return;
        }
        const timer = setTimeout(() => {
          waiters.delete(check);
          fail(new Error(`no ${what} within ${timeoutMs} ms; received: ${JSON.stringify(received)}`));
        }, timeoutMs);
        const check = (m: Wire) => {
          if (!match(m)) return;
          clearTimeout(timer);
          waiters.delete(check);
          ok(m);
        };
        waiters.add(check);
      }),
    close: () => client.close(),
  };
}

export interface EventLine {
  readonly event: string;
  readonly [key: string]: unknown;
}

/** The JSON lines an upstream fixture wrote with --events-file (none yet: empty). */
export function readEvents(file: string): EventLine[] {
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as EventLine);
}

/** Waits (polling the file) for an event line that matches; fails with what the file held. */
export async function waitForEvent(
  file: string,
  match: (e: EventLine) => boolean,
  what: string,
  timeoutMs = 20_000,
): Promise<EventLine> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const hit = readEvents(file).find(match);
    if (hit) return hit;
    if (Date.now() > until) throw new Error(`no ${what} within ${timeoutMs} ms in ${file}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
