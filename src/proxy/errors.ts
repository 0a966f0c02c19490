/** @module Errors on the wire: code, message and data exactly as they should reach the client. */
import { AuthorizationRequiredError } from "../upstream/http-auth.js";
import { CODE, codeOf, WireError } from "../wire/errors.js";

/** An Error the session answers as `{code, message, data}` (the table's named errors are preferred). */
export function rpcError(code: number, message: string, data?: unknown): Error {
  return new WireError(code, message, data);
}

/**
 * An error from a forwarded request, ready to re-throw to the other side: the peer's own errors verbatim,
 * local ones (timeout, closed connection) naming who they were waiting for: `upstream NAME`, or `the client`.
 */
export function upstreamError(err: unknown, upstream: string): Error {
  const who = upstream === "client" ? "the client" : `upstream ${upstream}`;
  // Typed, with its code, message and data for the wire: the session layer may still turn it into an elicitation.
  if (err instanceof AuthorizationRequiredError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const own = err as { code?: unknown; data?: unknown };
  if (Number.isSafeInteger(own?.code)) {
    const code = own.code as number;
    const local = code === CODE.requestTimeout || code === CODE.connectionClosed;
    if (local && err instanceof WireError && !message.startsWith(who))
      return new WireError(code, `${who}: ${message}`, own.data);
    return err instanceof WireError ? err : new WireError(code, message, own.data);
  }
  return new WireError(codeOf(err), message.startsWith(who) ? message : `${who}: ${message}`);
}
