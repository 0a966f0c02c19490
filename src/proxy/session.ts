/** @module One client session: an SDK Server built from a resolution, forwarding every kind of traffic. */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  ErrorCode,
  type JSONRPCMessage,
  type Notification,
  type Request,
  type RequestId,
  ResultSchema,
  type ServerCapabilities,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv-provider.js";
import type { ToolDef } from "../catalog/inventory.js";
import type { Outcome } from "../metrics.js";
import { type Resolution, type Route, routeUri } from "../resolve.js";
import type { Selection } from "../selection.js";
import type { UpstreamConnection } from "../upstream/connection.js";
import { type Instance, instanceId, SHARED } from "../upstream/pool.js";
import { rpcError, upstreamError } from "./errors.js";
import { type Extra, type FastExtra, fastExtra, missingCapability } from "./extra.js";
import type { Gateway } from "./gateway.js";
import { HandleStore, INSPECT_TOOL } from "./handles.js";
import { type Lists, listsOf, offersInspect } from "./lists.js";
import { observeCall, outcomeOf } from "./observe.js";
import { TOOLSETS_TOOL, toolsetsToolResult } from "./toolsets-tool.js";
import { LOG_LEVELS } from "./traffic.js";
import { checkArguments } from "./validate.js";

type Params = Record<string, unknown>;

/** One validator for every session: the SDK would build an Ajv instance per Server otherwise. */
const sharedValidator = new AjvJsonSchemaValidator();

export class Session {
  readonly server: Server;
  lastSeen = Date.now();
  /** Large results this session captured (bounded; gone with the session). */
  readonly handles: HandleStore;
  /** The level this client asked for with logging/setLevel (everything until it does). */
  logLevel = "debug";
  /** The request currently being forwarded per upstream, so server→client requests ride on its stream. */
  private readonly calls = new Map<string, Extra[]>();
  private readonly capabilities: ServerCapabilities;

  constructor(
    private readonly gateway: Gateway,
    readonly selection: Selection,
    private current: Resolution,
    /** The isolated or per-credential connections this session uses (others: the shared one). */
    readonly instances: ReadonlyMap<string, Instance> = new Map(),
  ) {
    this.capabilities = gateway.capabilitiesOf(current, instances);
    this.handles = new HandleStore(gateway.catalog.stateMaxBytes);
    this.server = new Server(
      { name: gateway.options.name, version: gateway.options.version },
      {
        capabilities: this.capabilities,
        ...(current.instructions ? { instructions: current.instructions } : {}),
        jsonSchemaValidator: sharedValidator,
      },
    );
    // SDK clients ignore a cancellation of request id 0 (typescript-sdk issue 2283): start this session's
    // server→client request ids at 1 so that every one of them can be cancelled.
    const internals = this.server as unknown as { _requestMessageId?: unknown };
    if (typeof internals._requestMessageId !== "number") {
      throw new Error("SDK internals changed: Server._requestMessageId is gone (see src/proxy/session.ts)");
    }
    internals._requestMessageId = 1;
    // Declaring `logging` installs a local setLevel handler that would swallow the request: forward it instead.
    this.server.removeRequestHandler("logging/setLevel");
    this.server.fallbackRequestHandler = async (request, extra) => this.handle(request, extra as Extra);
    this.server.fallbackNotificationHandler = async (n) => {
      if (n.method === "notifications/roots/list_changed") {
        for (const u of this.current.upstreams) void this.connection(u).notify(n);
      }
    };
  }

  get resolution(): Resolution {
    return this.current;
  }

  /** The connection this session uses for an upstream. */
  connection(upstream: string): UpstreamConnection {
    return this.gateway.pool.connection(upstream, this.instances.get(upstream) ?? SHARED);
  }

  instanceId(upstream: string): string {
    return instanceId(upstream, (this.instances.get(upstream) ?? SHARED).key);
  }

  private get lists(): Lists {
    return listsOf(this.current, this.gateway.offersToolsetsTool(this.current));
  }

  /** Swaps in a new resolution (whole state); tells the client which of its lists changed. */
  update(next: Resolution): void {
    const before = this.lists;
    this.current = next;
    const after = this.lists;
    const caps = this.capabilities;
    const changed = (a: unknown, b: unknown) => JSON.stringify(a) !== JSON.stringify(b);
    if (changed(before.tools, after.tools)) void this.notify({ method: "notifications/tools/list_changed" });
    if (caps.prompts && changed(before.prompts, after.prompts))
      void this.notify({ method: "notifications/prompts/list_changed" });
    if (caps.resources && changed([before.resources, before.templates], [after.resources, after.templates])) {
      void this.notify({ method: "notifications/resources/list_changed" });
    }
  }

  /** Sends a notification; one from an upstream instance rides on the stream of this session's call to it, if any. */
  async notify(notification: Notification, id?: string): Promise<void> {
    const call = id ? this.calls.get(id.slice(0, id.lastIndexOf("#")))?.at(-1) : undefined;
    if (call) {
      await call.sendNotification(notification as ServerNotification).catch(() => {});
      return;
    }
    await this.server.notification(notification as ServerNotification).catch(() => {});
  }

  /** A server→client request from an upstream: to this client, on the stream of the call that caused it. */
  async forwardServerRequest(id: string, request: { method: string; params?: unknown }, signal: AbortSignal) {
    const needs = missingCapability(this.server.getClientCapabilities(), request.method, request.params);
    if (needs) {
      throw rpcError(
        ErrorCode.MethodNotFound,
        `the client of this session does not support ${request.method} (no ${needs} capability)`,
      );
    }
    const call = this.calls.get(id.slice(0, id.lastIndexOf("#")))?.at(-1);
    const message = { method: request.method, params: request.params } as ServerRequest;
    try {
      if (call) return await call.sendRequest(message, ResultSchema, { signal, timeout: 10 * 60_000 });
      return await this.server.request(message, ResultSchema, { signal, timeout: 10 * 60_000 });
    } catch (err) {
      throw upstreamError(err, "client");
    }
  }

  async close(): Promise<void> {
    await this.server.close().catch(() => {});
  }

  /**
   * tools/call without the SDK Server (the HTTP transport's fast path): the same handler, with an equivalent
   * `extra` (cancellation signal, related notifications and server→client requests on this call's stream).
   */
  fastCall(message: JSONRPCMessage, fx: FastExtra): Promise<unknown> | undefined {
    const m = message as { id: RequestId; method: string; params?: Params };
    if (m.method !== "tools/call") return undefined;
    const params = m.params ?? {};
    const extra = fastExtra(this.server, m.id, params, fx);
    return Promise.resolve().then(() => this.handle({ method: m.method, params } as Request, extra));
  }

  private handle(request: Request, extra: Extra): Promise<Params> | Params {
    this.lastSeen = Date.now();
    const params = (request.params ?? {}) as Params;
    const r = this.current;
    switch (request.method) {
      case "tools/list":
        return this.lists.tools as unknown as Params;
      case "prompts/list":
        return this.lists.prompts as unknown as Params;
      case "resources/list":
        return this.lists.resources as unknown as Params;
      case "resources/templates/list":
        return this.lists.templates as unknown as Params;
      case "tools/call":
        return this.callTool(params, extra);
      case "prompts/get":
        return this.forward(this.named(r.prompt, params.name, "prompt"), "prompts/get", params, extra, true);
      case "resources/read":
        return this.forward(this.byUri(params.uri), "resources/read", params, extra);
      case "resources/subscribe":
      case "resources/unsubscribe":
        return this.subscription(request.method, params, extra);
      case "completion/complete":
        return this.complete(params, extra);
      case "logging/setLevel":
        return this.setLevel(params, extra);
      default:
        throw rpcError(ErrorCode.MethodNotFound, `Method not found: ${request.method}`);
    }
  }

  private named(map: ReadonlyMap<string, Route>, name: unknown, kind: string): Route {
    const route = typeof name === "string" ? map.get(name) : undefined;
    if (!route) throw rpcError(ErrorCode.InvalidParams, `Unknown ${kind}: ${String(name)}`);
    return route;
  }

  private byUri(uri: unknown): Route {
    const upstream = typeof uri === "string" ? routeUri(this.current, uri) : undefined;
    if (!upstream) throw rpcError(-32002, `Resource not found: ${String(uri)}`, { uri });
    return {
      kind: "resource",
      name: uri as string,
      original: uri as string,
      upstream,
      toolsets: [],
      definition: {},
    };
  }

  private async callTool(params: Params, extra: Extra): Promise<Params> {
    const name = params.name;
    if (typeof name !== "string") throw rpcError(ErrorCode.InvalidParams, "tools/call needs a tool name");
    const route = this.current.tool.get(name);
    if (!route) {
      if (name === TOOLSETS_TOOL && this.gateway.offersToolsetsTool(this.current)) {
        return toolsetsToolResult(this.gateway.report(this.selection, this.current));
      }
      if (name === INSPECT_TOOL && offersInspect(this.current)) {
        return this.handles.inspect((params.arguments ?? {}) as Params);
      }
      throw rpcError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    }
    // A handle stands for the value it names, for any tool of any upstream in this session.
    const args = this.handles.substitute(route.definition as ToolDef, params.arguments);
    if (this.gateway.catalog.upstreams.get(route.upstream)?.validateArguments !== false) {
      checkArguments(route, args);
    }
    const started = performance.now();
    let outcome: Outcome = "error";
    try {
      const body = args === params.arguments ? params : { ...params, arguments: args };
      const result = await this.forward(route, "tools/call", body, extra, true);
      outcome = result.isError === true ? "tool_error" : "ok";
      return this.handles.capture(route, result);
    } catch (err) {
      outcome = outcomeOf(err, extra.signal);
      throw err;
    } finally {
      observeCall(this.gateway, route, extra, outcome, started);
    }
  }

  private async subscription(method: string, params: Params, extra: Extra): Promise<Params> {
    const route = this.byUri(params.uri);
    const uri = params.uri as string;
    const traffic = this.gateway.traffic;
    const id = this.instanceId(route.upstream);
    const ask =
      method === "resources/subscribe"
        ? traffic.subscribe(id, uri, this)
        : traffic.unsubscribe(id, uri, this);
    if (!ask) return {};
    try {
      return await this.forward(route, method, params, extra);
    } catch (err) {
      // Not subscribed upstream after all: forget it, or the next subscribe would not ask again.
      if (method === "resources/subscribe") traffic.unsubscribe(id, uri, this);
      throw err;
    }
  }

  private async complete(params: Params, extra: Extra): Promise<Params> {
    const ref = (params.ref ?? {}) as { type?: string; name?: string; uri?: string };
    if (ref.type === "ref/prompt") {
      const route = this.named(this.current.prompt, ref.name, "prompt");
      return this.forward(
        route,
        "completion/complete",
        { ...params, ref: { ...ref, name: route.original } },
        extra,
      );
    }
    if (ref.type === "ref/resource")
      return this.forward(this.byUri(ref.uri), "completion/complete", params, extra);
    throw rpcError(ErrorCode.InvalidParams, `completion/complete: unknown ref type ${String(ref.type)}`);
  }

  private async setLevel(params: Params, extra: Extra): Promise<Params> {
    if (!LOG_LEVELS.includes(String(params.level))) {
      throw rpcError(
        ErrorCode.InvalidParams,
        `logging/setLevel: level must be one of ${LOG_LEVELS.join(", ")}`,
      );
    }
    this.logLevel = String(params.level);
    const traffic = this.gateway.traffic;
    await Promise.all(
      this.current.upstreams
        .filter((u) => this.connection(u).capabilities?.logging)
        .map((u) =>
          this.connection(u).request(
            "logging/setLevel",
            { level: traffic.upstreamLevel(this.instanceId(u)) },
            { signal: extra.signal },
          ),
        ),
    ).catch((err) => {
      throw upstreamError(err, "logging");
    });
    return {};
  }

  /**
   * An upstream another session set to a quiet level while alone on it would swallow this session's logs: make
   * it as verbose again as its sessions want before calling it (rare: only after such a setLevel).
   */
  private async raiseLevel(id: string, upstream: string): Promise<void> {
    const level = this.gateway.traffic.levelToRaise(id, this.logLevel);
    if (!level) return;
    await this.connection(upstream)
      .request("logging/setLevel", { level })
      .catch(() => {});
  }

  /**
   * Forwards to the route's upstream under the original name: the client's cancellation goes along, progress
   * comes back under the client's own token, and server→client requests raised meanwhile ride on this call.
   */
  private async forward(
    route: Route,
    method: string,
    params: Params,
    extra: Extra,
    rename = false,
  ): Promise<Params> {
    const { _meta, ...rest } = params as { _meta?: Params };
    const token = _meta?.progressToken;
    let meta = _meta;
    if (token !== undefined) {
      const { progressToken: _t, ...others } = _meta!;
      meta = Object.keys(others).length ? others : undefined;
    }
    const body = { ...rest, ...(rename ? { name: route.original } : {}), ...(meta ? { _meta: meta } : {}) };
    const calls = this.calls.get(route.upstream) ?? [];
    this.calls.set(route.upstream, calls);
    calls.push(extra);
    const id = this.instanceId(route.upstream);
    const end = this.gateway.traffic.begin(id, this);
    try {
      await this.raiseLevel(id, route.upstream);
      // Cancelled while the level was raised: the connection would not see an abort that already happened.
      extra.signal.throwIfAborted();
      return await this.connection(route.upstream).request(method, body, {
        signal: extra.signal,
        ...(token !== undefined
          ? {
              onProgress: (p: Params) =>
                void extra.sendNotification({
                  method: "notifications/progress",
                  params: { ...p, progressToken: token },
                } as ServerNotification),
            }
          : {}),
      });
    } catch (err) {
      throw upstreamError(err, route.upstream);
    } finally {
      end();
      calls.splice(calls.indexOf(extra), 1);
    }
  }
}
