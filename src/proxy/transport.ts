/**
 * @module The transport a session speaks through: the SDK's Transport shape (so the SDK's stdio and in-memory
 * transports fit), plus an optional `abandon` for a request that will get no answer (it was cancelled).
 */
import type { JSONRPCMessage, MessageExtraInfo, RequestId } from "@modelcontextprotocol/sdk/types.js";

/** Where one request's related messages and its answer go: the session's transport, or one HTTP exchange. */
export interface Reply {
  send(message: JSONRPCMessage): Promise<void>;
  /** The request gets no answer (it was cancelled): whatever waits for it may end. */
  abandon(): void;
}

export interface SessionTransport {
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  start?(): Promise<void>;
  /** A message tied to a request (`relatedRequestId`) rides on that request's stream where there is one. */
  send(message: JSONRPCMessage, options?: { relatedRequestId?: RequestId }): Promise<void>;
  /** The request will get no answer (it was cancelled): end whatever waits for it. */
  abandon?(id: RequestId): void;
  /** True while the client holds a stream of it open (a GET stream): the session is in use even when quiet. */
  readonly holding?: boolean;
  close(): Promise<void>;
}
