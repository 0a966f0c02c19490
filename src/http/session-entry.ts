/** @module What the session table holds and answers: an entry, a refusal, the table's options, a session's log digest. */
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Principal, Requires } from "../auth/types.js";
import type { Limits } from "../catalog/limits.js";
import type { Gateway } from "../proxy/gateway.js";
import type { Session } from "../proxy/session.js";
import { sendRpcError } from "./replies.js";
import type { HttpSessionTransport } from "./session-transport.js";

export interface Entry {
  readonly session: Session;
  readonly transport: HttpSessionTransport;
  /** The digest of the credential values the session was opened with: every request must carry the same. */
  readonly binding: string;
  /** Who opened it, for per-client limits (see client-key.ts). */
  readonly client: string;
  /** The identity of its initialize's principal (`identityKey`): every request must be the same. */
  readonly subject: string | undefined;
}

/** Why a session could not be opened or found: an HTTP status and a JSON-RPC error. */
export interface Refusal {
  readonly status: number;
  readonly code: number;
  readonly message: string;
  readonly headers?: Record<string, string>;
}

export interface TableOptions {
  readonly sessionIdleMs: number;
  /** With a secret shared by replicas, ids are signed seeds any replica can rebuild a session from. */
  readonly sessionSecret?: string;
  /** The limits in force now (a reload may change them). */
  readonly limits: () => Limits;
  /** Who a request comes from, for per-client limits. */
  readonly clientOf: (req: IncomingMessage, principal?: Principal) => string;
}

/** A request whose token names another subject than the session's initialize did. */
export function anotherIdentity(): Refusal {
  return { status: 403, code: -32000, message: "Forbidden: this session belongs to another identity" };
}

export function isRefusal(x: Entry | Refusal): x is Refusal {
  return "status" in x;
}

/** A session id is a bearer of its session: logs show a short digest of it, never the id. */
export function sessionDigest(id: string): string {
  return createHash("sha256").update(id).digest("hex").slice(0, 12);
}

export function refuse(res: ServerResponse, r: Refusal): void {
  sendRpcError(res, r.status, r.code, r.message, r.headers);
}

/** What a session's later requests must still be granted: the requirements of its active gated toolsets. */
export function grantedTo(gateway: Gateway, entry: Entry): Requires[] {
  const out: Requires[] = [];
  for (const name of entry.session.selection.active) {
    const requires = gateway.catalog.toolset.get(name)?.requires;
    if (requires) out.push(requires);
  }
  return out;
}
