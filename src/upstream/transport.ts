/** @module Builds the client transport of one upstream: a stdio child process, or Streamable HTTP over undici (ours). */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Dispatcher } from "undici";
import type { Upstream } from "../catalog/types.js";
import type { InstanceValues } from "../config/instance-vars.js";
import type { ParamHeader } from "../modern/headers.js";
import type { UpstreamAuth } from "./http-auth.js";
import { adopt } from "./prespawn.js";
import { spawnSpecOf, type Variant } from "./spawn-spec.js";
import { LeanStdioTransport } from "./stdio-transport.js";

export { resolveCommand, type Variant } from "./spawn-spec.js";

type Undici = typeof import("undici");
let undici: Promise<{ mod: Undici; agent: InstanceType<Undici["Agent"]> }> | undefined;
/** Keep-alive connections shared by every HTTP upstream of the process; undici loads only when one is used. */
function keepAlive() {
  undici ??= import("undici").then((mod) => ({
    mod,
    agent: new mod.Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, connections: 64 }),
  }));
  return undici;
}

/** The keep-alive dispatcher HTTP upstreams use (the era probe shares it). */
export async function httpDispatcher(): Promise<Dispatcher> {
  return (await keepAlive()).agent;
}

export interface BuiltTransport {
  readonly transport: Transport;
  /** The child process id once started (stdio only). */
  pid(): number | null;
  /** Lines the child wrote to stderr, for diagnostics (stdio only). */
  readonly stderrTail: string[];
  /** Why the transport failed on its own (a message over max_line_bytes), if it did: the reason to show. */
  failure(): string | undefined;
  /** HTTP: speak 2026-07-28 (standard headers from each body, `x-mcp-header` parameters from `headersOf`). */
  readonly speakModern?: (version: string, headersOf: (tool: string) => readonly ParamHeader[]) => void;
}

export async function buildTransport(
  up: Upstream,
  variant: Variant = {},
  name = up.name,
  instance?: InstanceValues,
  auth?: UpstreamAuth,
): Promise<BuiltTransport> {
  const stderrTail: string[] = [];
  if (up.transport === "http") {
    const [{ HttpClientTransport }, { agent }] = await Promise.all([
      import("./http-transport.js"),
      keepAlive(),
    ]);
    const transport = new HttpClientTransport(new URL(up.url!), {
      dispatcher: agent,
      headers: { ...up.headers, ...variant.headers },
      name,
      ...(up.maxLineBytes ? { maxMessageBytes: up.maxLineBytes } : {}),
      ...(auth ? { auth } : {}),
    });
    return {
      transport,
      pid: () => null,
      stderrTail,
      failure: () => undefined,
      speakModern: (version, headersOf) => transport.speakModern(version, headersOf),
    };
  }
  const spec = spawnSpecOf(up, variant, instance);
  const transport = new LeanStdioTransport(spec, variant.env || instance ? undefined : adopt(name, spec), {
    name,
    maxLineBytes: up.maxLineBytes,
  });
  transport.ensureSpawned();
  transport.stderr?.on("data", (chunk: Buffer) => {
    for (const line of chunk.toString("utf8").split("\n")) {
      if (!line.trim()) continue;
      stderrTail.push(line.length > 500 ? `${line.slice(0, 500)}…` : line);
      if (stderrTail.length > 20) stderrTail.shift();
    }
  });
  return { transport, pid: () => transport.pid, stderrTail, failure: () => transport.failure?.message };
}

export async function closeAgent(): Promise<void> {
  const u = undici;
  undici = undefined;
  if (u) await (await u).agent.close();
}
