/** @module One client session: an SDK Server built from a resolution, forwarding to the upstream pool. */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  ErrorCode,
  type Notification,
  type Request,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv-provider.js";
import type { Resolution } from "../resolve.js";
import type { Selection } from "../selection.js";
import { rpcError, upstreamError } from "./errors.js";
import type { Gateway } from "./gateway.js";
import { TOOLSETS_TOOL, toolsetsToolResult } from "./toolsets-tool.js";

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** One validator for every session: the SDK would build an Ajv instance per Server otherwise. */
const sharedValidator = new AjvJsonSchemaValidator();

export class Session {
  readonly server: Server;
  lastSeen = Date.now();

  constructor(
    private readonly gateway: Gateway,
    readonly selection: Selection,
    private current: Resolution,
  ) {
    this.server = new Server(
      { name: gateway.options.name, version: gateway.options.version },
      {
        capabilities: { tools: { listChanged: true } },
        ...(current.instructions ? { instructions: current.instructions } : {}),
        jsonSchemaValidator: sharedValidator,
      },
    );
    this.server.fallbackRequestHandler = (request, extra) => this.handle(request, extra as Extra);
  }

  get resolution(): Resolution {
    return this.current;
  }

  /** Swaps in a new resolution (whole state); tells the client when the tools it sees changed. */
  update(next: Resolution): void {
    const before = this.gateway.toolList(this.current);
    this.current = next;
    if (JSON.stringify(before) !== JSON.stringify(this.gateway.toolList(next))) {
      void this.notify({ method: "notifications/tools/list_changed" });
    }
  }

  async notify(notification: Notification): Promise<void> {
    await this.server.notification(notification as ServerNotification).catch(() => {});
  }

  async close(): Promise<void> {
    await this.server.close().catch(() => {});
  }

  private async handle(request: Request, extra: Extra): Promise<Record<string, unknown>> {
    this.lastSeen = Date.now();
    switch (request.method) {
      case "tools/list":
        return this.gateway.toolList(this.current) as unknown as Record<string, unknown>;
      case "tools/call":
        return this.callTool(request.params ?? {}, extra);
      default:
        throw rpcError(ErrorCode.MethodNotFound, `Method not found: ${request.method}`);
    }
  }

  private async callTool(params: Record<string, unknown>, extra: Extra): Promise<Record<string, unknown>> {
    const name = params.name;
    if (typeof name !== "string") throw rpcError(ErrorCode.InvalidParams, "tools/call needs a tool name");
    const route = this.current.tool.get(name);
    if (!route) {
      if (name === TOOLSETS_TOOL && this.gateway.options.toolsetsTool) {
        return toolsetsToolResult(this.gateway.report(this.selection, this.current));
      }
      throw rpcError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    }
    const { _meta, ...rest } = params as { _meta?: Record<string, unknown> };
    const token = _meta?.progressToken;
    let meta = _meta;
    if (token !== undefined) {
      const { progressToken: _t, ...others } = _meta!;
      meta = Object.keys(others).length ? others : undefined;
    }
    const upstream = this.gateway.pool.connection(route.upstream);
    try {
      return await upstream.request(
        "tools/call",
        { ...rest, name: route.original, ...(meta ? { _meta: meta } : {}) },
        {
          signal: extra.signal,
          ...(token !== undefined
            ? {
                resetTimeoutOnProgress: true,
                onprogress: (p) =>
                  void extra.sendNotification({
                    method: "notifications/progress",
                    params: { ...p, progressToken: token as string },
                  }),
              }
            : {}),
        },
      );
    } catch (err) {
      throw upstreamError(err, route.upstream);
    }
  }
}
