/** @module Serving one session over stdio, for clients that launch the proxy: stdout carries the protocol only. */
import { randomUUID } from "node:crypto";
import type { Principal } from "./auth/types.js";
import type { Gateway } from "./proxy/gateway.js";
import { StdioServerTransport } from "./stdio-server.js";

/** Serves until stdin closes; resolves then, after the session and every upstream are closed. */
export async function serveStdio(
  gateway: Gateway,
  selectionQuery: string,
  principal?: Principal,
): Promise<void> {
  const log = gateway.options.logger;
  const parsed = gateway.select(selectionQuery, principal);
  if (!parsed.ok) throw new Error(`bad --toolsets selection: ${parsed.error}`);
  const { selection } = parsed;
  const session = await gateway.open(selection, {}, randomUUID(), "stdio", principal);
  const transport = new StdioServerTransport();
  const ended = new Promise<void>((resolve) => {
    process.stdin.once("end", resolve);
    process.stdin.once("close", resolve);
    transport.onclose = () => resolve();
  });
  transport.onerror = (err) => log.warn(err.message);
  await session.connect(transport);
  const resolution = session.resolution;
  log.info("serving over stdio", {
    active: resolution.active,
    tools: resolution.tools.length,
    ...(selection.unknown.length ? { unknown: selection.unknown } : {}),
    ...(selection.forbidden?.length ? { forbidden: selection.forbidden } : {}),
  });
  await ended;
}
