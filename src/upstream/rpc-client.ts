/**
 * @module The MCP client side of one upstream connection, in place of the SDK's Client: the initialize handshake,
 * requests by numeric id with a timeout, server→client requests (ping answered here, the rest handed on, each
 * abortable by `notifications/cancelled`, id 0 included) and notifications. Forwarded calls do not come here
 * (forward.ts takes them off the transport first). It loads no zod and no ajv: the SDK's Client costs ~300 ms of
 * CPU to import, on the path of the first tools/list. Same wire behaviour as the SDK 1.x Client it replaces.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type {
  ClientCapabilities,
  JSONRPCMessage,
  Notification,
  RequestId,
  ServerCapabilities,
} from "@modelcontextprotocol/sdk/types.js";
import { ErrorCode, LATEST_PROTOCOL_VERSION, McpError, SUPPORTED_PROTOCOL_VERSIONS } from "../protocol.js";

type Params = Record<string, unknown>;

export interface RpcClientHandlers {
  /** A notification of the upstream's (cancellations and progress excepted). */
  onNotification(notification: Notification): void;
  /** A server→client request other than ping; its answer, or a rejection with `{code, message, data}`. */
  onRequest(request: { method: string; params?: Params }, signal: AbortSignal): Promise<unknown>;
}

type Incoming = {
  id?: RequestId;
  method?: string;
  params?: Params;
  result?: Params;
  error?: { code: number; message: string; data?: unknown };
};

interface Pending {
  resolve(result: Params): void;
  reject(err: unknown): void;
  timer: NodeJS.Timeout;
}

export class UpstreamRpcClient {
  onclose?: () => void;
  private transport: Transport | undefined;
  private seq = 0;
  private readonly pending = new Map<number, Pending>();
  /** Server→client requests being answered, by the upstream's id. */
  private readonly answering = new Map<RequestId, AbortController>();
  private serverCapabilities: ServerCapabilities | undefined;
  private closed = false;

  constructor(
    private readonly info: { name: string; version: string },
    private readonly capabilities: ClientCapabilities,
    private readonly handlers: RpcClientHandlers,
  ) {}

  getServerCapabilities(): ServerCapabilities | undefined {
    return this.serverCapabilities;
  }

  /** Starts the transport and initializes; on failure the transport is closed and the error thrown. */
  async connect(transport: Transport, options: { timeout: number }): Promise<void> {
    this.transport = transport;
    transport.onmessage = (message) => this.receive(message as Incoming);
    transport.onclose = () => this.closedByTransport();
    transport.onerror = () => {};
    try {
      await transport.start();
      const result = await this.request(
        "initialize",
        { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: this.capabilities, clientInfo: this.info },
        options,
      );
      const version = result.protocolVersion;
      if (typeof version !== "string" || !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
        throw new Error(`Server's protocol version is not supported: ${String(version)}`);
      }
      const caps = result.capabilities;
      this.serverCapabilities = (caps && typeof caps === "object" ? caps : {}) as ServerCapabilities;
      (transport as { setProtocolVersion?: (v: string) => void }).setProtocolVersion?.(version);
      await this.notification({ method: "notifications/initialized" });
    } catch (err) {
      void this.close();
      throw err;
    }
  }

  /** One request by a numeric id of ours; errors come back as McpError with the upstream's code and data. */
  request(method: string, params: Params, options: { timeout: number }): Promise<Params> {
    const transport = this.transport;
    if (!transport || this.closed)
      return Promise.reject(new McpError(ErrorCode.ConnectionClosed, "Not connected"));
    const id = this.seq++;
    return new Promise<Params>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (!this.pending.delete(id)) return;
        const err = new McpError(ErrorCode.RequestTimeout, "Request timed out", { timeout: options.timeout });
        void transport
          .send({
            jsonrpc: "2.0",
            method: "notifications/cancelled",
            params: { requestId: id, reason: String(err) },
          })
          .catch(() => {});
        reject(err);
      }, options.timeout);
      this.pending.set(id, { resolve, reject, timer });
      transport.send({ jsonrpc: "2.0", id, method, params } as JSONRPCMessage).catch((err: unknown) => {
        const p = this.pending.get(id);
        if (!p) return;
        this.pending.delete(id);
        clearTimeout(p.timer);
        reject(err);
      });
    });
  }

  async notification(notification: Notification): Promise<void> {
    if (!this.transport || this.closed) throw new McpError(ErrorCode.ConnectionClosed, "Not connected");
    await this.transport.send({ jsonrpc: "2.0", ...notification } as JSONRPCMessage);
  }

  async close(): Promise<void> {
    await this.transport?.close();
    // A transport that was never started may not call onclose.
    this.closedByTransport();
  }

  private receive(m: Incoming): void {
    if (m.method === undefined) {
      if (typeof m.id !== "number") return;
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      clearTimeout(p.timer);
      if (m.error) p.reject(McpError.fromError(m.error.code, m.error.message, m.error.data));
      else p.resolve(m.result ?? {});
      return;
    }
    if (m.id !== undefined) {
      this.answer(m.id, m.method, m.params);
      return;
    }
    if (m.method === "notifications/cancelled") {
      const id = m.params?.requestId as RequestId | undefined;
      if (id !== undefined) this.answering.get(id)?.abort(m.params?.reason);
      return;
    }
    // Progress is for requests that asked for it; these do not (forwarded calls get theirs in forward.ts).
    if (m.method === "notifications/progress") return;
    this.handlers.onNotification({
      method: m.method,
      ...(m.params ? { params: m.params } : {}),
    } as Notification);
  }

  /** Answers a server→client request: ping here, the rest by the handler; nothing once it was cancelled. */
  private answer(id: RequestId, method: string, params: Params | undefined): void {
    const controller = new AbortController();
    this.answering.set(id, controller);
    const request = { method, ...(params ? { params } : {}) };
    const result =
      method === "ping" ? Promise.resolve({}) : this.handlers.onRequest(request, controller.signal);
    const reply = (body: object) => {
      if (controller.signal.aborted || this.closed) return;
      void this.transport?.send({ jsonrpc: "2.0", id, ...body } as JSONRPCMessage).catch(() => {});
    };
    result
      .then(
        (value) => reply({ result: value ?? {} }),
        (err: { code?: unknown; message?: unknown; data?: unknown }) => {
          const code = Number.isSafeInteger(err?.code) ? (err.code as number) : ErrorCode.InternalError;
          const message = typeof err?.message === "string" ? err.message : "Internal error";
          reply({ error: { code, message, ...(err?.data !== undefined ? { data: err.data } : {}) } });
        },
      )
      .finally(() => {
        if (this.answering.get(id) === controller) this.answering.delete(id);
      });
  }

  private closedByTransport(): void {
    if (this.closed) return;
    this.closed = true;
    const pending = [...this.pending.values()];
    this.pending.clear();
    const err = new McpError(ErrorCode.ConnectionClosed, "Connection closed");
    for (const p of pending) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    for (const c of this.answering.values()) c.abort(err);
    this.answering.clear();
    this.onclose?.();
  }
}
