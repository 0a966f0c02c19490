/** @module One long-lived client for one upstream: lazy start, raw inventory, coalesced refresh, forwarding. */
import type {
  JSONRPCNotification,
  Notification,
  ServerCapabilities,
} from "@modelcontextprotocol/sdk/types.js";
import type { Offer, UpstreamState } from "../catalog/inventory.js";
import type { Upstream } from "../catalog/types.js";
import { ErrorCode, McpError } from "../protocol.js";
import { Restarts } from "./backoff.js";
import { answerItself, upstreamClient } from "./client.js";
import type { ConnectionOptions } from "./connection-options.js";
import { Forwarder, type ForwardOptions } from "./forward.js";
import { SessionGoneError, UpstreamUnreachableError } from "./http-answer.js";
import { listOffer } from "./lists.js";
import type { UpstreamRpcClient as Client } from "./rpc-client.js";
import { type BuiltTransport, buildTransport } from "./transport.js";
import { message, sameState, waitForExit, withTimeout } from "./util.js";

export type { ConnectionHooks, ConnectionOptions } from "./connection-options.js";
export type { ForwardOptions } from "./forward.js";
export { message } from "./util.js";

export const DEFAULT_CALL_TIMEOUT_MS = 60_000;

export class UpstreamConnection {
  private client: Client | undefined;
  private built: BuiltTransport | undefined;
  private starting: Promise<UpstreamState> | undefined;
  private refreshing: Promise<UpstreamState> | undefined;
  /** A refresh asked for while one was in flight: it runs once more after it (a list may have changed since). */
  private refreshAgain: Promise<UpstreamState> | undefined;
  private current: UpstreamState | undefined;
  private closed = false;
  /** Forwarded requests in flight on the current client, answered off its transport. */
  private forwarder = new Forwarder();
  /** A client still connecting: close() must be able to stop it too. */
  private connecting: Client | undefined;
  /** Consecutive failures and when a restart is allowed again. */
  private readonly restarts = new Restarts();
  /** Sessions using this instance (for reaping per-credential instances). */
  users = 0;

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
      const wait = this.restarts.waitMs(this.now());
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

  /**
   * Reads the lists again. Refreshes asked for while one is in flight share one more refresh after it: what
   * changed after the first read began (a second list_changed) is not lost.
   */
  refresh(): Promise<UpstreamState> {
    if (!this.client) return this.ensure();
    if (this.refreshing) {
      this.refreshAgain ??= this.refreshing.then(() => {
        this.refreshAgain = undefined;
        return this.refresh();
      });
      return this.refreshAgain;
    }
    this.refreshing = this.listOffer()
      .then((offer) => this.setState({ status: "ready", ...offer }))
      .catch(async (err) => {
        // A client that cannot list is closed before another is started in its place.
        await this.dropClient();
        if (err instanceof SessionGoneError) return this.ensure();
        this.failed();
        return this.setState({ status: "unavailable", reason: message(err) });
      })
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
    const used = { client: undefined as Client | undefined };
    try {
      return await this.requestOnce(method, params, options, used);
    } catch (err) {
      if (this.spec.transport !== "http") throw err;
      if (err instanceof SessionGoneError) {
        // The upstream refused before processing: it forgot our session (restarted, or expired it). Initialize
        // a new session (the first caller to see it does; the others wait for the same start), and send again.
        if (this.client === used.client) {
          this.options.logger.info("upstream session gone; initializing again", { upstream: this.spec.name });
          await this.dropClient();
        }
        return await this.requestOnce(method, params, options, used);
      }
      if (
        this.client &&
        this.client === used.client &&
        (err instanceof UpstreamUnreachableError || (err as { code?: string }).code === "ECONNREFUSED")
      ) {
        await this.dropClient();
        this.failed();
        this.setState({ status: "unavailable", reason: `unreachable: ${message(err)}` });
      }
      throw err;
    }
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
    used: { client: Client | undefined },
  ): Promise<Record<string, unknown>> {
    const state = await this.ensure();
    const client = this.client;
    used.client = client;
    if (state.status !== "ready" || !client) {
      throw new Error(
        `upstream ${this.spec.name} is unavailable${state.status === "unavailable" ? `: ${state.reason}` : ""}`,
      );
    }
    const tied = options.onServerRequest;
    return this.forwarder.request(this.built!.transport, method, params, {
      ...options,
      ...(tied
        ? {
            onServerRequest: (request, signal) =>
              Promise.resolve(
                answerItself(this.spec, this.options.kind ?? "shared", request.method) ??
                  tied(request, signal),
              ),
          }
        : {}),
      timeoutMs: options.timeoutMs ?? this.spec.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
    });
  }

  async notify(notification: JSONRPCNotification | Notification): Promise<void> {
    await this.client?.notification(notification as never);
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    const pid = this.built?.pid() ?? null;
    this.client = undefined;
    await Promise.all([client?.close().catch(() => {}), this.connecting?.close().catch(() => {})]);
    if (pid) await waitForExit(pid);
  }

  private failed(): void {
    this.restarts.failed(this.now());
  }

  private setState(state: UpstreamState): UpstreamState {
    if (state.status === "unavailable" && this.options.redact) {
      state = { status: "unavailable", reason: this.options.redact(state.reason) };
    }
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
    const kind = this.options.kind ?? "shared";
    const built = await buildTransport(
      this.spec,
      this.options.variant,
      this.spec.name,
      this.options.instance?.(),
    );
    const client = upstreamClient(this.spec, kind, this.options, {
      onListChanged: () => void this.refresh(),
      ...(hooks.onNotification ? { onNotification: (n) => hooks.onNotification!(this.spec.name, n) } : {}),
      ...(hooks.onServerRequest
        ? { onServerRequest: (r, signal) => hooks.onServerRequest!(this.spec.name, r, signal) }
        : {}),
    });
    const forwarder = new Forwarder();
    client.onclose = () => {
      forwarder.failAll(new McpError(ErrorCode.ConnectionClosed, "Connection closed"));
      if (this.client !== client) return;
      this.client = undefined;
      const tail = built.failure() ?? built.stderrTail.at(-1);
      log.warn("upstream closed", tail ? { last_stderr: this.options.redact?.(tail) ?? tail } : {});
      this.failed();
      this.setState({ status: "unavailable", reason: `connection closed${tail ? `: ${tail}` : ""}` });
    };
    try {
      log.debug("starting upstream", { transport: this.spec.transport });
      const timeout = this.spec.connectTimeoutMs;
      this.connecting = client;
      await withTimeout(client.connect(built.transport, { timeout }), timeout, "initialize");
      if (this.closed) throw new Error("closed while starting");
      forwarder.attach(built.transport);
      this.forwarder = forwarder;
      this.client = client;
      this.built = built;
      const offer = await withTimeout(this.listOffer(), timeout, "listing");
      if (this.closed) throw new Error("closed while starting");
      this.restarts.up(this.now());
      if (this.restarts.afterFailure) hooks.onRestart?.(this.spec.name);
      log.info("upstream ready", {
        tools: offer.tools.length,
        prompts: offer.prompts.length,
        resources: offer.resources.length + offer.templates.length,
        ...(built.pid() ? { pid: built.pid() } : {}),
      });
      return this.setState({ status: "ready", ...offer });
    } catch (err) {
      // Forgotten before it is closed, so that its onclose does not count the failure a second time.
      if (this.client === client) this.client = undefined;
      await client.close().catch(() => {});
      if (this.closed) return { status: "unavailable", reason: "closed" };
      const tail = built.stderrTail.at(-1);
      const reason = `${message(err)}${tail ? ` (stderr: ${tail})` : ""}`;
      log.warn("upstream failed to start", { reason: this.options.redact?.(reason) ?? reason });
      this.failed();
      return this.setState({ status: "unavailable", reason });
    } finally {
      if (this.connecting === client) this.connecting = undefined;
    }
  }

  private async listOffer(): Promise<Offer> {
    const client = this.client;
    if (!client) throw new Error("not connected");
    this.options.hooks.onListed?.(this.spec.name);
    return listOffer(client, this.spec.connectTimeoutMs, (method, reason) =>
      this.options.logger.warn(`${method} failed; taken as empty`, {
        upstream: this.spec.name,
        reason: this.options.redact?.(reason) ?? reason,
      }),
    );
  }
}
