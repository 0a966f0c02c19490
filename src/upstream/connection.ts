/** @module One long-lived client for one upstream: lazy start, raw inventory, coalesced refresh, forwarding. */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  type ClientCapabilities,
  type JSONRPCNotification,
  type Notification,
  ResultSchema,
  type ServerCapabilities,
} from "@modelcontextprotocol/sdk/types.js";
import type { ToolDef, UpstreamState } from "../catalog/inventory.js";
import type { Upstream } from "../catalog/types.js";
import type { Logger } from "../log.js";
import { type BuiltTransport, buildTransport } from "./transport.js";

const MAX_PAGES = 100;

export interface ConnectionHooks {
  /** The tool list of this upstream changed (after a refresh that found a different list). */
  onInventory?(name: string, state: UpstreamState): void;
  /** Any notification the upstream sends (list changes, logging, progress, resource updates). */
  onNotification?(name: string, notification: Notification): void;
  /** Capabilities the shared upstream client declares (sampling, elicitation, roots), with their handler. */
  clientCapabilities?: ClientCapabilities;
  onServerRequest?(
    name: string,
    request: { method: string; params?: unknown },
    signal: AbortSignal,
  ): Promise<unknown>;
}

export interface ConnectionOptions {
  readonly clientName: string;
  readonly clientVersion: string;
  readonly logger: Logger;
  readonly hooks: ConnectionHooks;
}

export class UpstreamConnection {
  private client: Client | undefined;
  private built: BuiltTransport | undefined;
  private starting: Promise<UpstreamState> | undefined;
  private refreshing: Promise<UpstreamState> | undefined;
  private current: UpstreamState | undefined;
  private closed = false;

  constructor(
    readonly spec: Upstream,
    private readonly options: ConnectionOptions,
  ) {}

  /** The last known state; undefined while never started. */
  get state(): UpstreamState | undefined {
    return this.current;
  }

  get capabilities(): ServerCapabilities | undefined {
    return this.client?.getServerCapabilities();
  }

  pid(): number | null {
    return this.built?.pid() ?? null;
  }

  /** Starts the upstream if needed and returns its state; concurrent callers share one start. */
  ensure(): Promise<UpstreamState> {
    if (this.current?.status === "ready" && this.client) return Promise.resolve(this.current);
    this.starting ??= this.start().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  /** Reads the tool list again; concurrent refreshes share one request. */
  refresh(): Promise<UpstreamState> {
    if (!this.client) return this.ensure();
    this.refreshing ??= this.listTools()
      .then((tools) => this.setState({ status: "ready", tools }))
      .catch((err) => this.setState({ status: "unavailable", reason: `tools/list failed: ${message(err)}` }))
      .finally(() => {
        this.refreshing = undefined;
      });
    return this.refreshing;
  }

  /** Forwards one request; errors come back as the upstream sent them. */
  async request(
    method: string,
    params: unknown,
    options: RequestOptions = {},
  ): Promise<Record<string, unknown>> {
    const state = await this.ensure();
    if (state.status !== "ready" || !this.client)
      throw new Error(
        `upstream ${this.spec.name} is unavailable: ${state.status === "unavailable" ? state.reason : ""}`,
      );
    return (await this.client.request({ method, params } as never, ResultSchema, options)) as Record<
      string,
      unknown
    >;
  }

  async notify(notification: JSONRPCNotification | Notification): Promise<void> {
    await this.client?.notification(notification as never);
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    const pid = this.built?.pid() ?? null;
    this.client = undefined;
    await client?.close().catch(() => {});
    if (pid) await waitForExit(pid);
  }

  private setState(state: UpstreamState): UpstreamState {
    const previous = this.current;
    this.current = Object.freeze(state);
    if (!sameState(previous, state)) this.options.hooks.onInventory?.(this.spec.name, this.current);
    return this.current;
  }

  private async start(): Promise<UpstreamState> {
    if (this.closed) return { status: "unavailable", reason: "closed" };
    const { logger, hooks } = this.options;
    const log = logger.child({ upstream: this.spec.name });
    const built = buildTransport(this.spec);
    const client = new Client(
      { name: this.options.clientName, version: this.options.clientVersion },
      { capabilities: hooks.onServerRequest ? (hooks.clientCapabilities ?? {}) : {} },
    );
    client.fallbackNotificationHandler = async (n) => {
      if (n.method === "notifications/tools/list_changed") void this.refresh();
      hooks.onNotification?.(this.spec.name, n);
    };
    if (hooks.onServerRequest) {
      const handler = hooks.onServerRequest;
      client.fallbackRequestHandler = async (request, extra) =>
        (await handler(this.spec.name, request, extra.signal)) as never;
    }
    client.onclose = () => {
      if (this.client !== client) return;
      this.client = undefined;
      const tail = built.stderrTail.at(-1);
      log.warn("upstream closed", tail ? { last_stderr: tail } : {});
      this.setState({ status: "unavailable", reason: `connection closed${tail ? `: ${tail}` : ""}` });
    };
    try {
      log.debug("starting upstream", { transport: this.spec.transport });
      await client.connect(built.transport);
      this.client = client;
      this.built = built;
      const tools = await this.listTools();
      log.info("upstream ready", { tools: tools.length, pid: built.pid() ?? undefined });
      return this.setState({ status: "ready", tools });
    } catch (err) {
      await client.close().catch(() => {});
      const tail = built.stderrTail.at(-1);
      const reason = `${message(err)}${tail ? ` (stderr: ${tail})` : ""}`;
      log.warn("upstream failed to start", { reason });
      this.client = undefined;
      return this.setState({ status: "unavailable", reason });
    }
  }

  private async listTools(): Promise<ToolDef[]> {
    const client = this.client;
    if (!client) throw new Error("not connected");
    if (!client.getServerCapabilities()?.tools) return [];
    const tools: ToolDef[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = (await client.request(
        { method: "tools/list", params: cursor ? { cursor } : {} },
        ResultSchema,
      )) as { tools?: ToolDef[]; nextCursor?: string };
      tools.push(...(result.tools ?? []));
      cursor = result.nextCursor;
      if (!cursor) break;
    }
    return tools;
  }
}

function sameState(a: UpstreamState | undefined, b: UpstreamState): boolean {
  if (!a || a.status !== b.status) return false;
  if (a.status === "unavailable" || b.status === "unavailable") return true;
  return JSON.stringify(a.tools) === JSON.stringify(b.tools);
}

export function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

async function waitForExit(pid: number, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  try {
    process.kill(pid, "SIGKILL");
  } catch {}
}
