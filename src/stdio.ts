/** @module Serving one session over stdio, for clients that launch the proxy: stdout carries the protocol only. */
import type { Principal } from "./auth/types.js";
import type { Front } from "./door/front.js";
import { StdioServerTransport } from "./stdio-server.js";

/** Serves until stdin closes; resolves then (the caller closes the front and the upstreams). */
export async function serveStdio(front: Front, selectionQuery: string, principal?: Principal): Promise<void> {
  const log = front.logger;
  let closed: () => void = () => {};
  const ended = new Promise<void>((resolve) => {
    process.stdin.once("end", resolve);
    process.stdin.once("close", resolve);
    closed = resolve;
  });
  const served = await front.stdio(selectionQuery, principal, ({ admit }) => {
    const transport = new StdioServerTransport(process.stdin, process.stdout, undefined, admit);
    transport.onclosed = closed;
    transport.onerror = (err) => log.warn(err.message);
    return transport;
  });
  log.info("serving over stdio", {
    active: served.active,
    tools: served.tools,
    ...(served.unknown.length ? { unknown: served.unknown } : {}),
    ...(served.forbidden?.length ? { forbidden: served.forbidden } : {}),
  });
  await ended;
}
