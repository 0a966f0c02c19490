/**
 * @module One long-lived client for one upstream: lazy start (its era found first), raw inventory, coalesced
 * refresh, forwarding. What is said on the wire is the channel's (2025 or 2026-07-28); callers see one surface.
 */
import type { ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { Dispatcher } from "undici";
import type { Offer, UpstreamState } from "../catalog/inventory.js";
import type { Upstream } from "../catalog/types.js";
import { callsPerClient } from "../catalog/upstreams.js";
import { errors } from "../wire/errors.js";
import { Restarts } from "./backoff.js";
import type { Channel } from "./channel.js";
import type { ConnectionOptions } from "./connection-options.js";
import { type Era, EraCache, eraKey } from "./era.js";
import type { ForwardOptions } from "./forward.js";
import { EraRefusedError, SessionGoneError, UpstreamUnreachableError } from "./http-answer.js";
import { type Opening, openChannel } from "./open.js";
import { refreshFailure, startFailure, tellingLine } from "./start-failure.js";
import { type BuiltTransport, closePool, connectionPool } from "./transport.js";
import { message, redactError, sameState, waitForExit, withTimeout } from "./util.js";

export type { ConnectionHooks, ConnectionOptions } from "./connection-options.js";
export type { Era } from "./era.js";
export type { ForwardOptions } from "./forward.js";

const DEFAULT_CALL_TIMEOUT_MS = 60_000;

export class UpstreamConnection {
  private channel: Channel | undefined;
  private built: BuiltTransport | undefined;
  private starting: Promise<UpstreamState> | undefined;
  private refreshing: Promise<UpstreamState> | undefined;
  /** A refresh asked for while one was in flight: it runs once more after it (a list may have changed since). */
  private refreshAgain: Promise<UpstreamState> | undefined;
  private current: UpstreamState | undefined;
  private closed = false;
  /** An instance still starting (or probing: `stop`): close() must be able to stop it too. */
  private connecting: Opening | undefined;
  private readonly stop = new AbortController();
  private readonly eras: EraCache;
  /** Consecutive failures and when a restart is allowed again. */
  private readonly restarts = new Restarts();
  /** HTTP: this instance's own connections, made at its first start, kept across restarts, ended with it. */
  private pool: Promise<Dispatcher> | undefined;
  /** HTTP: the calls each client has open on this instance now (each holds one of its connections). */
  private readonly open = new Map<string, number>();
  /** This instance's own connections (HTTP): made once, for its era probe and every transport it builds. */
  private readonly connections = (): Promise<Dispatcher> =>
    (this.pool ??= connectionPool(this.spec.maxConnections));
  users = 0; // sessions using this instance (for reaping per-credential instances)

  constructor(
    readonly spec: Upstream,
    private readonly options: ConnectionOptions,
  ) {
    this.eras = options.eras ?? new EraCache();
  }

  /** The last known state; undefined while never started. */
  get state(): UpstreamState | undefined {
    return this.current;
  }

  get capabilities(): ServerCapabilities | undefined {
    return this.channel?.capabilities;
  }

  /** It serves one client by construction (`servesOneClient`). */
  get owned(): boolean {
    return this.options.owned === true;
  }

  /** The era spoken to this instance: its channel's; while it is down, the pinned one (`auto`: undefined). */
  get era(): Era | undefined {
    return this.channel?.era ?? (this.spec.protocol === "auto" ? undefined : this.spec.protocol);
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
    if (this.current?.status === "ready" && this.channel) return Promise.resolve(this.current);
    if (this.current?.status === "unavailable" && !this.starting) {
      const wait = this.restarts.waitMs(this.now());
      if (!restart) return Promise.resolve(this.current);
      if (wait > 0) {
        return Promise.resolve({
          ...this.current,
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
    if (!this.channel) return this.ensure();
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
        await this.dropChannel(err);
        if (err instanceof SessionGoneError) return this.ensure();
        this.failed();
        return this.setState(refreshFailure(err, this.options.logger));
      })
      .finally(() => {
        this.refreshing = undefined;
      });
    return this.refreshing;
  }

  /**
   * Forwards one request; errors come back as the upstream sent them, with configured secrets and this instance's
   * credential values redacted (whoever reads them: a client of either era, a span, a log line). Progress uses a
   * token of our own on this hop, read straight off the transport, so that a final progress arriving with the
   * result is not lost. A request of a client (`options.client`) to an HTTP upstream counts against that client's
   * share of the instance's connections while it is open; past it, it is refused before anything is sent.
   */
  async request(
    method: string,
    params: Record<string, unknown>,
    options: ForwardOptions = {},
  ): Promise<Record<string, unknown>> {
    const leave = this.enter(options.client);
    try {
      // Ready (the usual case): straight to the channel, with nothing to start or wait for first.
      const channel = this.channel;
      return await (channel && this.current?.status === "ready"
        ? this.onChannel(channel, method, params, options)
        : this.forward(method, params, options));
    } catch (err) {
      throw redactError(err, this.options.redact);
    } finally {
      leave();
    }
  }

  /** One request on a ready channel; over HTTP, a session the upstream forgot is started again and sent again. */
  private onChannel(
    channel: Channel,
    method: string,
    params: Record<string, unknown>,
    options: ForwardOptions,
  ): Promise<Record<string, unknown>> {
    const sent = channel.request(method, params, options, this.timeoutOf(options));
    if (this.spec.transport !== "http") return sent;
    return sent.catch((err: unknown) => this.afterFailure(err, channel, method, params, options));
  }

  private timeoutOf(options: ForwardOptions): number {
    return options.timeoutMs ?? this.spec.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  }

  /**
   * One more call of `client` on this instance: refused past its share (SPEC §7.6); the function ends it. An
   * instance that serves one client by construction has nobody to share with: its pool alone bounds it.
   */
  private enter(client: string | undefined): () => void {
    if (client === undefined || this.spec.transport !== "http" || this.owned) return () => {};
    const max = callsPerClient(this.spec);
    const held = this.open.get(client) ?? 0;
    if (held >= max) {
      this.options.hooks.onLimited?.(this.spec.name, "upstream_calls_per_client", { client, max });
      throw errors.upstreamCallsPerClient(this.spec.name, max, this.spec.maxConnections);
    }
    this.open.set(client, held + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const n = (this.open.get(client) ?? 1) - 1;
      if (n > 0) this.open.set(client, n);
      else this.open.delete(client);
    };
  }

  /** A request while the instance is not ready: it waits for the start (or fails with why it is unavailable). */
  private async forward(
    method: string,
    params: Record<string, unknown>,
    options: ForwardOptions,
  ): Promise<Record<string, unknown>> {
    const channel = await this.readyChannel();
    return this.onChannel(channel, method, params, options);
  }

  /**
   * What an HTTP request that failed on `used` does next: the upstream refused before processing because it forgot
   * our session (restarted, or expired it), or a 2026-07-28 request met a 2025 server: start again (the first
   * caller to see it does, probing the era again after a refused 2026 request; the others wait for the same start)
   * and send once more. An upstream that cannot be reached is marked unavailable. Anything else is the answer.
   */
  private async afterFailure(
    err: unknown,
    used: Channel,
    method: string,
    params: Record<string, unknown>,
    options: ForwardOptions,
  ): Promise<Record<string, unknown>> {
    if (err instanceof SessionGoneError) {
      if (this.channel === used) {
        this.options.logger.info(`upstream: ${err.message}; starting again`, { upstream: this.spec.name });
        await this.dropChannel(err);
      }
      const again = await this.readyChannel();
      return again.request(method, params, options, this.timeoutOf(options));
    }
    if (
      this.channel === used &&
      (err instanceof UpstreamUnreachableError || (err as { code?: string }).code === "ECONNREFUSED")
    ) {
      await this.dropChannel();
      this.failed();
      this.setState({ status: "unavailable", reason: `unreachable: ${message(err)}` });
    }
    throw err;
  }

  /** New credentials (an OAuth grant): start now if down, else read the lists again (they may depend on who asks). */
  renew(): Promise<UpstreamState> {
    this.restarts.reset();
    return this.channel ? this.refresh() : this.ensure();
  }

  /** Closes the channel; after a refused 2026-07-28 request the next start probes the era again. */
  private async dropChannel(why?: unknown): Promise<void> {
    const channel = this.channel;
    [this.channel, this.current] = [undefined, undefined];
    if (why instanceof EraRefusedError) this.eras.forget(eraKey(this.spec, this.options.variant));
    await channel?.close().catch(() => {});
  }

  /** The channel once the instance is ready (started if need be), or why it is unavailable. */
  private async readyChannel(): Promise<Channel> {
    const state = await this.ensure();
    const channel = this.channel;
    if (state.status !== "ready" || !channel) {
      throw new Error(
        `upstream ${this.spec.name} is unavailable${state.status === "unavailable" ? `: ${state.reason}` : ""}`,
      );
    }
    return channel;
  }

  async notify(notification: { method: string; params?: Record<string, unknown> }): Promise<void> {
    await this.channel?.notify(notification);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stop.abort();
    const channel = this.channel;
    const pid = this.built?.pid() ?? null;
    this.channel = undefined;
    await Promise.all([
      channel?.close().catch(() => {}),
      this.connecting?.built?.transport.close().catch(() => {}),
    ]);
    const pool = this.pool;
    this.pool = undefined;
    if (pool) await pool.then(closePool, () => {});
    if (pid) await waitForExit(pid);
  }

  /** A failure: the restart backs off, and probes the era again (an upstream may come back as another). */
  private failed(): void {
    this.restarts.failed(this.now());
    this.eras.forget(eraKey(this.spec, this.options.variant));
  }

  private setState(state: UpstreamState): UpstreamState {
    if (state.status === "unavailable" && this.options.redact) {
      state = { ...state, reason: this.options.redact(state.reason) };
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
    const opening: Opening = {};
    let channel: Channel | undefined;
    try {
      log.debug("starting upstream", { transport: this.spec.transport, protocol: this.spec.protocol });
      const onClosed = () => this.channelClosed(channel, opening.built!, log);
      const run = {
        eras: this.eras,
        signal: this.stop.signal,
        log,
        onClosed,
        onListChanged: () => this.refresh(),
        pool: this.connections,
      };
      this.connecting = opening;
      channel = await openChannel(this.spec, this.options, run, opening);
      if (this.closed) throw new Error("closed while starting");
      this.channel = channel;
      this.built = opening.built;
      const built = opening.built!;
      const offer = await withTimeout(this.listOffer(), this.spec.connectTimeoutMs, "listing");
      if (this.closed) throw new Error("closed while starting");
      this.restarts.up(this.now());
      if (this.restarts.afterFailure) hooks.onRestart?.(this.spec.name);
      log.info("upstream ready", {
        era: channel.era,
        tools: offer.tools.length,
        prompts: offer.prompts.length,
        resources: offer.resources.length + offer.templates.length,
        ...(built.pid() ? { pid: built.pid() } : {}),
      });
      return this.setState({ status: "ready", ...offer });
    } catch (err) {
      // Forgotten before it is closed, so that its close does not count the failure a second time.
      if (channel && this.channel === channel) this.channel = undefined;
      await (channel ? channel.close() : opening.built?.transport.close())?.catch(() => {});
      if (this.closed) return { status: "unavailable", reason: "closed" };
      this.failed();
      return this.setState(startFailure(err, opening.built?.stderrTail, log, this.options.redact));
    } finally {
      if (this.connecting === opening) this.connecting = undefined;
    }
  }

  /** The channel ended on its own: the instance is down until its next use restarts it. */
  private channelClosed(
    channel: Channel | undefined,
    built: BuiltTransport,
    log: ConnectionOptions["logger"],
  ): void {
    if (!channel || this.channel !== channel) return;
    this.channel = undefined;
    const tail = built.failure() ?? tellingLine(built.stderrTail);
    log.warn("upstream closed", tail ? { last_stderr: this.options.redact?.(tail) ?? tail } : {});
    this.failed();
    this.setState({ status: "unavailable", reason: `connection closed${tail ? `: ${tail}` : ""}` });
  }

  private async listOffer(): Promise<Offer> {
    const channel = this.channel;
    if (!channel) throw new Error("not connected");
    this.options.hooks.onListed?.(this.spec.name);
    return channel.listOffer((method, reason) =>
      this.options.logger.warn(`${method} failed; taken as empty`, {
        upstream: this.spec.name,
        reason: this.options.redact?.(reason) ?? reason,
      }),
    );
  }
}
