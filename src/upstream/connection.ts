/** @module One long-lived client for one upstream: lazy start, raw inventory, coalesced refresh, forwarding. */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type ClientCapabilities,
  ErrorCode,
  type JSONRPCMessage,
  type JSONRPCNotification,
  McpError,
  type Notification,
  ResultSchema,
  type ServerCapabilities,
} from "@modelcontextprotocol/sdk/types.js";
import type { Offer, UpstreamState } from "../catalog/inventory.js";
import type { Upstream } from "../catalog/types.js";
import type { Logger } from "../log.js";
import { backoffDelay, STABLE_MS } from "./backoff.js";
import { type BuiltTransport, buildTransport, type Variant } from "./transport.js";

const MAX_PAGES = 100;
export const DEFAULT_CALL_TIMEOUT_MS = 60_000;

export interface ForwardOptions {
  readonly signal?: AbortSignal;
  /** Fails the call (and cancels it upstream) after this long without a result or progress. */
  readonly timeoutMs?: number;
  /** Progress of this call, delivered synchronously in arrival order (the last one included). */
  readonly onProgress?: (params: Record<string, unknown>) => void;
}

export interface ConnectionHooks {
  /** The tool list of this upstream changed (after a refresh that found a different list). */
  onInventory?(name: string, state: UpstreamState): void;
  /** Any notification the upstream sends (list changes, logging, progress, resource updates). */
  onNotification?(name: string, notification: Notification): void;
  /** Observability: an upstream started again after a failure; its lists were read. */
  onRestart?(name: string): void;
  onListed?(name: string): void;
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
  /** Credentials of this instance (forwarded headers or header_env); none for the shared one. */
  readonly variant?: Variant;
  /** For logs: which instance this is (never the credential itself). */
  readonly label?: string;
  readonly now?: () => number;
}

export class UpstreamConnection {
  private client: Client | undefined;
  private built: BuiltTransport | undefined;
  private starting: Promise<UpstreamState> | undefined;
  private refreshing: Promise<UpstreamState> | undefined;
  private current: UpstreamState | undefined;
  private closed = false;
  private progressSeq = 0;
  private requestSeq = 0;
  /** Forwarded requests awaiting their answer, by our id on this hop. */
  private readonly pending = new Map<
    string,
    { resolve: (r: Record<string, unknown>) => void; reject: (e: unknown) => void }
  >();
  /** Consecutive failures, the time a restart is allowed again, and since when the upstream has been up. */
  private failures = 0;
  private retryAt = 0;
  private upSince = 0;
  /** Sessions using this instance (for reaping per-credential instances). */
  users = 0;
  private readonly progress = new Map<string, (params: Record<string, unknown>) => void>();

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

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /**
   * Starts the upstream if needed and returns its state; concurrent callers share one start. After a failure
   * a restart waits for its backoff; until then (or with `restart: false` once it has failed) the
   * unavailable state is returned as it is.
   */
  ensure(restart = true): Promise<UpstreamState> {
    if (this.current?.status === "ready" && this.client) return Promise.resolve(this.current);
    if (this.current?.status === "unavailable" && !this.starting) {
      const wait = this.retryAt - this.now();
      if (!restart) return Promise.resolve(this.current);
      if (wait > 0) {
        return Promise.resolve({
          status: "unavailable",
          reason: `${this.current.reason}; next restart in ${Math.ceil(wait / 1000)} s`,
        });
      }
    }
    this.starting ??= this.start().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  /** Reads the tool list again; concurrent refreshes share one request. */
  refresh(): Promise<UpstreamState> {
    if (!this.client) return this.ensure();
    this.refreshing ??= this.listOffer()
      .then((offer) => this.setState({ status: "ready", ...offer }))
      .catch((err) => this.setState({ status: "unavailable", reason: `tools/list failed: ${message(err)}` }))
      .finally(() => {
        this.refreshing = undefined;
      });
    return this.refreshing;
  }

  /**
   * Forwards one request; errors come back as the upstream sent them. Progress uses a token of our own on this
   * hop, read straight off the transport, so that a final progress arriving with the result is not lost.
   */
  async request(
    method: string,
    params: Record<string, unknown>,
    options: ForwardOptions = {},
  ): Promise<Record<string, unknown>> {
    try {
      return await this.requestOnce(method, params, options);
    } catch (err) {
      if (this.spec.transport !== "http" || !this.client) throw err;
      if (err instanceof StreamableHTTPError && err.code === 404) {
        // The upstream forgot our session (it restarted, or expired it): initialize again, once, and retry.
        this.options.logger.info("upstream session expired; initializing again", {
          upstream: this.spec.name,
        });
        await this.dropClient();
        return await this.requestOnce(method, params, options);
      }
      if (err instanceof TypeError || (err as { code?: string }).code === "ECONNREFUSED") {
        await this.dropClient();
        this.failed();
        this.setState({ status: "unavailable", reason: `unreachable: ${message(err)}` });
      }
      throw err;
    }
  }

  private failPending(err: unknown): void {
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) p.reject(err);
  }

  private async dropClient(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.current = undefined;
    await client?.close().catch(() => {});
  }

  private async requestOnce(
    method: string,
    params: Record<string, unknown>,
    options: ForwardOptions,
  ): Promise<Record<string, unknown>> {
    const state = await this.ensure();
    const client = this.client;
    if (state.status !== "ready" || !client) {
      throw new Error(
        `upstream ${this.spec.name} is unavailable${state.status === "unavailable" ? `: ${state.reason}` : ""}`,
      );
    }
    const built = this.built!;
    // Our own request id space on this hop ("tp:N": the SDK client's own ids are numbers): the answer is taken
    // straight off the transport, without the SDK's request bookkeeping and result re-validation per call.
    const id = `tp:${++this.requestSeq}`;
    const timeoutMs = options.timeoutMs ?? this.spec.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    let token: string | undefined;
    const answered = new Promise<Record<string, unknown>>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
    });
    const settle = (err: unknown) => {
      const p = this.pending.get(id);
      if (!p) return;
      this.pending.delete(id);
      void built.transport
        .send({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: id, reason: String((err as Error)?.message ?? err) },
        })
        .catch(() => {});
      p.reject(err);
    };
    const abort = () => settle(options.signal?.reason ?? new McpError(ErrorCode.RequestTimeout, "cancelled"));
    const arm = () => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => {
        settle(
          new McpError(ErrorCode.RequestTimeout, `timed out after ${timeoutMs} ms`, { timeout: timeoutMs }),
        );
      }, timeoutMs);
    };
    let sent = params;
    if (options.onProgress) {
      token = `tp-${++this.progressSeq}`;
      const onProgress = options.onProgress;
      this.progress.set(token, (p) => {
        arm();
        onProgress(p);
      });
      sent = { ...params, _meta: { ...(params._meta as object | undefined), progressToken: token } };
    }
    try {
      options.signal?.addEventListener("abort", abort, { once: true });
      // Cancelled while the upstream was (re)starting: the listener above came too late to hear it.
      if (options.signal?.aborted) throw options.signal.reason ?? new Error("cancelled");
      arm();
      await built.transport.send({ jsonrpc: "2.0", id, method, params: sent } as JSONRPCMessage);
      return await answered;
    } finally {
      this.pending.delete(id);
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", abort);
      if (token) this.progress.delete(token);
    }
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

  /** Counts a failure (start failed, or the upstream went away) and sets when a restart is allowed. */
  private failed(): void {
    const now = this.now();
    if (this.upSince && now - this.upSince >= STABLE_MS) this.failures = 0;
    this.upSince = 0;
    this.failures++;
    this.retryAt = now + backoffDelay(this.failures);
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
    const log = logger.child({
      upstream: this.spec.name,
      ...(this.options.label ? { instance: this.options.label } : {}),
    });
    const built = await buildTransport(this.spec, this.options.variant);
    const client = new Client(
      { name: this.options.clientName, version: this.options.clientVersion },
      { capabilities: hooks.onServerRequest ? (hooks.clientCapabilities ?? {}) : {} },
    );
    client.fallbackNotificationHandler = async (n) => {
      if (/^notifications\/(tools|prompts|resources)\/list_changed$/.test(n.method)) void this.refresh();
      hooks.onNotification?.(this.spec.name, n);
    };
    if (hooks.onServerRequest) {
      const handler = hooks.onServerRequest;
      client.fallbackRequestHandler = async (request, extra) =>
        (await handler(this.spec.name, request, extra.signal)) as never;
    }
    client.onclose = () => {
      this.failPending(new McpError(ErrorCode.ConnectionClosed, "Connection closed"));
      if (this.client !== client) return;
      this.client = undefined;
      const tail = built.stderrTail.at(-1);
      log.warn("upstream closed", tail ? { last_stderr: tail } : {});
      this.failed();
      this.setState({ status: "unavailable", reason: `connection closed${tail ? `: ${tail}` : ""}` });
    };
    try {
      log.debug("starting upstream", { transport: this.spec.transport });
      const timeout = this.spec.connectTimeoutMs;
      await withTimeout(client.connect(built.transport, { timeout }), timeout, "initialize");
      this.interceptProgress(built, client);
      this.client = client;
      this.built = built;
      const offer = await withTimeout(this.listOffer(), timeout, "listing");
      this.upSince = this.now();
      if (this.failures > 0) hooks.onRestart?.(this.spec.name);
      log.info("upstream ready", {
        tools: offer.tools.length,
        prompts: offer.prompts.length,
        resources: offer.resources.length + offer.templates.length,
        pid: built.pid() ?? undefined,
      });
      return this.setState({ status: "ready", ...offer });
    } catch (err) {
      await client.close().catch(() => {});
      const tail = built.stderrTail.at(-1);
      const reason = `${message(err)}${tail ? ` (stderr: ${tail})` : ""}`;
      log.warn("upstream failed to start", { reason });
      this.client = undefined;
      this.failed();
      return this.setState({ status: "unavailable", reason });
    }
  }

  /** Progress for our own tokens is handled as it arrives, before the SDK sees the result that may follow it. */
  private interceptProgress(built: BuiltTransport, client: Client): void {
    const transport = built.transport;
    const sdk = transport.onmessage;
    transport.onmessage = (message, extra) => {
      const m = message as { method?: string; params?: { progressToken?: unknown } };
      if (
        m.method === "notifications/cancelled" &&
        (m.params as { requestId?: unknown } | undefined)?.requestId === 0
      ) {
        // SDK 1.32 ignores a cancellation of request id 0 (`if (!requestId) return`): the upstream's first
        // server→client request. Abort its handler here (typescript-sdk issue 2283).
        const handlers = (
          client as unknown as { _requestHandlerAbortControllers?: Map<unknown, AbortController> }
        )._requestHandlerAbortControllers;
        handlers?.get(0)?.abort((m.params as { reason?: unknown }).reason);
      }
      const answer = message as {
        id?: unknown;
        result?: Record<string, unknown>;
        error?: { code: number; message: string; data?: unknown };
      };
      if (typeof answer.id === "string" && !m.method) {
        const p = this.pending.get(answer.id);
        if (p) {
          this.pending.delete(answer.id);
          if (answer.error)
            p.reject(McpError.fromError(answer.error.code, answer.error.message, answer.error.data));
          else p.resolve(answer.result ?? {});
          return;
        }
      }
      if (m.method === "notifications/progress") {
        const handler = this.progress.get(String(m.params?.progressToken));
        if (handler) {
          const { progressToken: _t, ...rest } = m.params as Record<string, unknown>;
          handler(rest);
          return;
        }
      }
      sdk?.(message, extra);
    };
  }

  private async listOffer(): Promise<Offer> {
    const client = this.client;
    if (!client) throw new Error("not connected");
    this.options.hooks.onListed?.(this.spec.name);
    const caps = client.getServerCapabilities() ?? {};
    const [tools, prompts, resources, templates] = await Promise.all([
      caps.tools ? this.listAll<Offer["tools"][number]>("tools/list", "tools") : [],
      caps.prompts ? this.listAll<Offer["prompts"][number]>("prompts/list", "prompts") : [],
      caps.resources ? this.listAll<Offer["resources"][number]>("resources/list", "resources") : [],
      caps.resources
        ? this.listAll<Offer["templates"][number]>("resources/templates/list", "resourceTemplates")
        : [],
    ]);
    return { tools, prompts, resources, templates };
  }

  /** Every page of a list, raw (unknown keys and `_meta` kept). */
  private async listAll<T>(method: string, key: string): Promise<T[]> {
    const client = this.client;
    if (!client) throw new Error("not connected");
    const items: T[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = (await client.request(
        { method, params: cursor ? { cursor } : {} } as never,
        ResultSchema,
        {
          timeout: DEFAULT_CALL_TIMEOUT_MS,
        },
      )) as Record<string, unknown>;
      items.push(...((result[key] as T[] | undefined) ?? []));
      cursor = result.nextCursor as string | undefined;
      if (!cursor) break;
    }
    return items;
  }
}

function sameState(a: UpstreamState | undefined, b: UpstreamState): boolean {
  if (!a || a.status !== b.status) return false;
  if (a.status === "unavailable" || b.status === "unavailable") return a === b;
  return (
    JSON.stringify([a.tools, a.prompts, a.resources, a.templates]) ===
    JSON.stringify([b.tools, b.prompts, b.resources, b.templates])
  );
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
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
