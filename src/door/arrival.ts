/** @module What an edge hands the door: one request as it arrived, and how it connects a session it speaks for. */
import type { WireError } from "../wire/errors.js";

/** Headers as node:http gives them (lower-case names). */
export type Headers = Readonly<Record<string, string | readonly string[] | undefined>>;

/** One request as an edge received it: its URL's query, its headers, the address it came from. */
export interface Arrival {
  readonly query: string;
  readonly headers: Headers;
  /** The peer address of the connection (a trusted proxy's X-Forwarded-For is read from `headers`). */
  readonly address: string;
}

/**
 * Makes the transport a 2025 session speaks through, once the door has opened it. `admit(n)`: the door's bound on
 * requests in flight, which the transport asks before it hands over `n` more (refusing them as its framing says).
 */
export type Connect<T> = (session: {
  readonly id: string;
  readonly digest: string;
  admit(n: number): WireError | undefined;
}) => T;
