/** @module Builds the SDK client transport of one upstream: stdio child process, or Streamable HTTP over undici. */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { Agent, fetch as undiciFetch } from "undici";
import type { Upstream } from "../catalog/types.js";

/** Keep-alive connections shared by every HTTP upstream of the process. */
let agent: Agent | undefined;
function keepAlive(): Agent {
  agent ??= new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, connections: 64 });
  return agent;
}

/** A bare command is looked up in node_modules/.bin of the upstream's folder first, then on PATH. */
export function resolveCommand(command: string, cwd: string): string {
  if (command.includes("/")) return command;
  for (const dir of [cwd, process.cwd()]) {
    const candidate = join(dir, "node_modules", ".bin", command);
    if (existsSync(candidate)) return candidate;
  }
  return command;
}

export interface BuiltTransport {
  readonly transport: Transport;
  /** The child process id once started (stdio only). */
  pid(): number | null;
  /** Lines the child wrote to stderr, for diagnostics (stdio only). */
  readonly stderrTail: string[];
}

/** Per-variant additions: forwarded credential headers (HTTP) or environment (stdio). */
export interface Variant {
  readonly headers?: Readonly<Record<string, string>>;
  readonly env?: Readonly<Record<string, string>>;
}

export function buildTransport(up: Upstream, variant: Variant = {}): BuiltTransport {
  const stderrTail: string[] = [];
  if (up.transport === "http") {
    const transport = new StreamableHTTPClientTransport(new URL(up.url!), {
      requestInit: { headers: { ...up.headers, ...variant.headers } },
      fetch: ((url: string | URL, init?: RequestInit) =>
        undiciFetch(url, { ...(init as object), dispatcher: keepAlive() })) as unknown as typeof fetch,
    });
    return { transport, pid: () => null, stderrTail };
  }
  const transport = new StdioClientTransport({
    command: resolveCommand(up.command!, up.cwd),
    args: [...up.args],
    env: {
      ...getDefaultEnvironment(),
      ...(process.env as Record<string, string>),
      ...up.env,
      ...variant.env,
    },
    cwd: up.cwd,
    stderr: "pipe",
  });
  transport.stderr?.on("data", (chunk: Buffer) => {
    for (const line of chunk.toString("utf8").split("\n")) {
      if (!line.trim()) continue;
      stderrTail.push(line.length > 500 ? `${line.slice(0, 500)}…` : line);
      if (stderrTail.length > 20) stderrTail.shift();
    }
  });
  return { transport, pid: () => transport.pid, stderrTail };
}

export async function closeAgent(): Promise<void> {
  const a = agent;
  agent = undefined;
  await a?.close();
}
