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

export type { Variant } from "./spawn-spec.js";

let undici: Promise<typeof import("undici")> | undefined;
/** Every pool still open, so that a command's shutdown can close what an instance left (closeAgent). */
const pools = new Set<Dispatcher>();

/**
 * The keep-alive connections of one HTTP instance, at most `connections` to its origin and shared with no other
 * instance: what one instance's calls and its GET or listen stream hold never delays another's (SPEC §7.6).
 * undici loads only when an HTTP upstream is used.
 */
export async function connectionPool(connections: number): Promise<Dispatcher> {
  undici ??= import("undici");
  const { Agent } = await undici;
  const pool = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, connections });
  pools.add(pool);
  return pool;
}

/** Ends a pool at once: what still runs on it was aborted by its instance already. */
export async function closePool(pool: Dispatcher): Promise<void> {
  if (!pools.delete(pool)) return;
  await pool.destroy().catch(() => {});
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
  variant: Variant,
  name: string,
  instance: InstanceValues | undefined,
  auth: UpstreamAuth | undefined,
  /** HTTP: the instance's own connections (connectionPool). */
  pool: () => Promise<Dispatcher>,
): Promise<BuiltTransport> {
  const stderrTail: string[] = [];
  if (up.transport === "http") {
    const [{ HttpClientTransport }, dispatcher] = await Promise.all([import("./http-transport.js"), pool()]);
    const transport = new HttpClientTransport(new URL(up.url!), {
      dispatcher,
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

/** Closes every HTTP pool still open (a command's shutdown, after its instances closed). */
export async function closeAgent(): Promise<void> {
  await Promise.all([...pools].map(closePool));
}
