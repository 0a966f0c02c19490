/** @module What a request handler is given besides the request, and what a client can be asked. */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type {
  ClientCapabilities,
  JSONRPCMessage,
  MessageExtraInfo,
  RequestId,
  ResultSchema,
  ServerNotification,
  ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** What a transport's fast path hands a session with a request it did not give to the SDK Server. */
export interface FastExtra {
  readonly sessionId: string;
  readonly signal: AbortSignal;
  readonly requestInfo: MessageExtraInfo["requestInfo"];
  /** Sends a message related to this request (on its stream). */
  notify(message: JSONRPCMessage): Promise<void>;
}

/** The SDK's `extra` for a request the SDK Server never saw: related messages ride on that request's stream. */
export function fastExtra(
  server: Server,
  id: RequestId,
  params: Record<string, unknown>,
  fx: FastExtra,
): Extra {
  return {
    signal: fx.signal,
    sessionId: fx.sessionId,
    requestId: id,
    requestInfo: fx.requestInfo,
    _meta: params._meta,
    sendNotification: async (n: ServerNotification) => {
      if (!fx.signal.aborted) await fx.notify({ jsonrpc: "2.0", ...n } as JSONRPCMessage);
    },
    sendRequest: (r: ServerRequest, schema: typeof ResultSchema, options?: Record<string, unknown>) =>
      server.request(r, schema, { ...options, relatedRequestId: id }),
  } as unknown as Extra;
}

/**
 * The client capability a server→client request needs, or undefined. Elicitation has modes: an empty
 * `elicitation: {}` means form only (as before modes existed); URL mode needs `elicitation.url`.
 */
export function missingCapability(
  caps: ClientCapabilities | undefined,
  method: string,
  params: unknown,
): string | undefined {
  if (method === "sampling/createMessage") return caps?.sampling ? undefined : "sampling";
  if (method === "roots/list") return caps?.roots ? undefined : "roots";
  if (method !== "elicitation/create") return undefined;
  const e = caps?.elicitation as { form?: object; url?: object } | undefined;
  if (!e) return "elicitation";
  const mode = (params as { mode?: string } | undefined)?.mode ?? "form";
  if (mode === "url") return e.url ? undefined : "elicitation.url";
  return e.form || !e.url ? undefined : "elicitation.form";
}

/** The id that ties a call's log lines together: the client's `x-request-id`, or the one the HTTP layer made. */
export function requestIdOf(extra: Extra): string | undefined {
  const v = extra.requestInfo?.headers?.["x-request-id"];
  return typeof v === "string" ? v : undefined;
}
