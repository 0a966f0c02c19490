/** @module Every upstream's running instances: one shared, plus per-credential and per-session ones. */

import type { Inventory, UpstreamState } from "../catalog/inventory.js";
import type { Catalog, Upstream } from "../catalog/types.js";
import { redact } from "../config/env.js";
import { LimitNotices } from "../limit-notices.js";
import type { Logger } from "../log.js";
import type { Signal } from "../wire/signal.js";
import { type ConnectionHooks, UpstreamConnection } from "./connection.js";
import type { UpstreamTransports } from "./connection-options.js";
import { EraCache } from "./era.js";
import type { UpstreamAuth } from "./http-auth.js";
import { type InstanceRef, refLabel, servesOneClient, sharedRef } from "./instance.js";
import { InstanceDirs } from "./instance-dirs.js";

export interface PoolOptions {
  readonly clientName: string;
  readonly clientVersion: string;
  readonly logger: Logger;
  /** How long an unused per-credential instance is kept before it is closed. */
  readonly idleInstanceMs?: number;
  /** OAuth towards an HTTP upstream: the tokens an instance carries (undefined: none). */
  readonly auth?: ((ref: InstanceRef, spec: Upstream) => UpstreamAuth | undefined) | undefined;
  /** The process serves one client (`serve --transport stdio`): every instance is that client's (SPEC §10.5). */
  readonly oneClient?: boolean;
  /** Upstreams that run in process: their transports, by spec (each instance asks for its own). */
  readonly transport?: UpstreamTransports | undefined;
}

type Hooks = Pick<ConnectionHooks, "onRestart" | "onListed">;

export interface PoolHooks extends Hooks {
  /** An instance's inventory or availability changed. */
  onChange?(ref: InstanceRef, state: UpstreamState): void;
  /** A limit of SPEC §7.6 refused a call on an instance (`upstream_calls_per_client`); the pool logs it too. */
  onLimited?(ref: InstanceRef, limit: string): void;
  /** An instance was closed and forgotten (reaped, refused, replaced by a reload). */
  onClosed?(ref: InstanceRef): void;
  /** A notification the upstream sent that is not tied to a forwarded request. */
  onNotification?(ref: InstanceRef, notification: { method: string; params?: unknown }): void;
  /** A server→client request the upstream sent that is not tied to a forwarded request. */
  onServerRequest?(
    ref: InstanceRef,
    request: { method: string; params?: unknown },
    signal: Signal,
  ): Promise<unknown>;
}

/** No instance can be had now: 503 (every slot busy) or 429 (the client starts new ones too fast). */
class TooManyInstances extends Error {
  constructor(
    message: string,
    readonly status: 503 | 429 = 503,
    /** Seconds, for a `Retry-After` header. */
    readonly retryAfter = 30,
  ) {
    super(message);
  }
}

interface Entry {
  readonly ref: InstanceRef;
  readonly connection: UpstreamConnection;
  users: number;
  reaper?: NodeJS.Timeout;
}

export class UpstreamPool {
  private readonly entries = new Map<string, Entry>();
  /** Instances being ended (a released per-session one, a reaped one): close() waits for them too. */
  private readonly ending = new Set<Promise<void>>();
  private readonly dirs = new InstanceDirs();
  /** Each upstream's era, found once for all its instances (forgotten when one fails). */
  private readonly eras = new EraCache();
  private readonly notices: LimitNotices;

  constructor(
    private catalog: Catalog,
    private readonly options: PoolOptions,
    private readonly hooks: PoolHooks = {},
  ) {
    this.notices = new LimitNotices(options.logger);
  }

  /** The connection of an instance, made (not started) on first use. */
  connection(ref: InstanceRef): UpstreamConnection {
    return (this.entries.get(ref.id) ?? this.make(ref)).connection;
  }

  /** The connection of an instance if it exists; never makes one. */
  existing(ref: InstanceRef): UpstreamConnection | undefined {
    return this.entries.get(ref.id)?.connection;
  }

  private make(ref: InstanceRef): Entry {
    const spec = this.catalog.upstreams.get(ref.upstream);
    if (!spec) throw new Error(`unknown upstream ${ref.upstream}`);
    if (ref.kind !== "shared") {
      let running = 0;
      for (const e of this.entries.values()) {
        if (e.ref.upstream === ref.upstream && e.ref.kind !== "shared") running++;
      }
      if (running >= spec.maxInstances) {
        throw new TooManyInstances(
          `upstream ${ref.upstream} already runs ${running} isolated instances (max_instances: ${spec.maxInstances})`,
        );
      }
    }
    const secrets = new Map(this.catalog.secrets);
    for (const [k, v] of Object.entries({ ...ref.variant?.headers, ...ref.variant?.env })) {
      if (v.length >= 4) secrets.set(v, `<${k}>`);
    }
    const { onNotification, onServerRequest } = this.hooks;
    const auth = spec.transport === "http" ? this.options.auth?.(ref, spec) : undefined;
    const connection = new UpstreamConnection(spec, {
      ...(auth ? { auth } : {}),
      clientName: this.options.clientName,
      clientVersion: this.options.clientVersion,
      logger: this.options.logger,
      redact: (text) => redact(text, secrets),
      eras: this.eras,
      owned: servesOneClient(ref, this.options.oneClient === true),
      ...(this.options.transport ? { transport: this.options.transport } : {}),
      ...(ref.variant ? { variant: ref.variant } : {}),
      ...(ref.kind !== "shared" ? { label: refLabel(ref) } : {}),
      instance: () => this.dirs.values(ref, spec, this.catalog),
      hooks: {
        ...(this.hooks.onRestart ? { onRestart: this.hooks.onRestart } : {}),
        ...(this.hooks.onListed ? { onListed: this.hooks.onListed } : {}),
        onInventory: (_n, state) => this.hooks.onChange?.(ref, state),
        onLimited: (_n, limit, fields) => {
          this.hooks.onLimited?.(ref, limit);
          this.notices.say(
            limit,
            "a client's call refused: it has its most calls open on this upstream instance",
            {
              upstream: ref.upstream,
              ...(ref.kind !== "shared" ? { instance: refLabel(ref) } : {}),
              ...fields,
            },
          );
        },
        ...(onNotification ? { onNotification: (_n, n) => onNotification(ref, n) } : {}),
        ...(onServerRequest
          ? { onServerRequest: (_n, request, signal) => onServerRequest(ref, request, signal) }
          : {}),
      },
    });
    const entry: Entry = { ref, connection, users: 0 };
    this.entries.set(ref.id, entry);
    return entry;
  }

  private forget(entry: Entry): void {
    if (this.entries.get(entry.ref.id) !== entry) return;
    clearTimeout(entry.reaper);
    this.entries.delete(entry.ref.id);
    this.hooks.onClosed?.(entry.ref);
  }

  /**
   * Ends an instance. Its temporary folder goes with it, except a per-session instance's, which is its session's
   * (`dropDir` set when the session let it go): a reload or a closed slot may end the process while the session
   * lives, and the next instance of that session finds its folder as it was. A folder a newer instance of the
   * same ref uses meanwhile is never removed from under it.
   */
  private closeEntry(entry: Entry, dropDir = entry.ref.kind !== "session"): Promise<void> {
    this.forget(entry);
    const ending = (async () => {
      await entry.connection.close();
      if (dropDir && !this.entries.has(entry.ref.id)) await this.dirs.release(entry.ref);
    })();
    this.ending.add(ending);
    return ending.finally(() => this.ending.delete(ending));
  }

  /** The running per-credential and per-session instances of an upstream. */
  isolated(upstream: string): InstanceRef[] {
    const out: InstanceRef[] = [];
    for (const e of this.entries.values())
      if (e.ref.upstream === upstream && e.ref.kind !== "shared") out.push(e.ref);
    return out;
  }

  /** Closes an isolated instance now, whoever still holds it (to give its slot to another). */
  async closeNow(ref: InstanceRef): Promise<void> {
    const entry = this.entries.get(ref.id);
    if (entry && ref.kind !== "shared") await this.closeEntry(entry);
  }

  /** A session starts using an instance. */
  acquire(ref: InstanceRef): UpstreamConnection {
    const entry = this.entries.get(ref.id) ?? this.make(ref);
    entry.users++;
    clearTimeout(entry.reaper);
    entry.reaper = undefined;
    return entry.connection;
  }

  /** A session stops using an instance: a per-session one closes now, a per-credential one when idle a while. */
  release(ref: InstanceRef): void {
    if (ref.kind === "shared") return;
    const entry = this.entries.get(ref.id);
    if (!entry) {
      // Its instance was ended already (a reload, a closed slot): the session's folder goes now.
      if (ref.kind === "session") void this.dirs.release(ref);
      return;
    }
    entry.users = Math.max(0, entry.users - 1);
    if (entry.users > 0) return;
    if (ref.kind === "session") {
      void this.closeEntry(entry, true);
      return;
    }
    clearTimeout(entry.reaper);
    entry.reaper = setTimeout(() => {
      if (entry.users === 0) void this.closeEntry(entry);
    }, this.options.idleInstanceMs ?? 60_000);
    entry.reaper.unref();
  }

  /**
   * Starts what these upstreams need (in parallel) and returns their inventory, through the given instances
   * (others: the shared one). With `restart: false` an upstream that failed is reported as it is (a report is
   * not a use). Every instance is made (or refused) before any starts: a refusal leaves nothing half-made.
   */
  async ensure(
    names: Iterable<string>,
    refs: ReadonlyMap<string, InstanceRef> = new Map(),
    restart = true,
  ): Promise<Inventory> {
    const list = [...new Set(names)];
    const made: Entry[] = [];
    let connections: UpstreamConnection[];
    try {
      connections = list.map((n) => {
        const ref = refs.get(n) ?? sharedRef(n);
        const known = this.entries.get(ref.id);
        if (known) return known.connection;
        const entry = this.make(ref);
        made.push(entry);
        return entry.connection;
      });
    } catch (err) {
      for (const e of made) if (e.ref.kind !== "shared" && e.users === 0) void this.closeEntry(e);
      throw err;
    }
    const states = await Promise.all(connections.map((c) => c.ensure(restart)));
    return new Map(list.map((n, i) => [n, states[i]!]));
  }

  refresh(ref: InstanceRef): Promise<UpstreamState> {
    return this.connection(ref).refresh();
  }

  /** Process ids of running stdio upstream instances (for tests and shutdown checks), by a readable label. */
  pids(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const e of this.entries.values()) {
      const pid = e.connection.pid();
      if (pid && e.connection.state?.status === "ready") out[`${e.ref.upstream}#${refLabel(e.ref)}`] = pid;
    }
    return out;
  }

  /** Every instance with its state, for /metrics, reports and health. */
  instances(): { ref: InstanceRef; state: UpstreamState | undefined }[] {
    return [...this.entries.values()].map((e) => ({ ref: e.ref, state: e.connection.state }));
  }

  /** A reload swaps the catalog: instances whose spec changed or vanished are closed (restarted on next use). */
  async setCatalog(catalog: Catalog): Promise<void> {
    this.catalog = catalog;
    const stale: Entry[] = [];
    for (const e of this.entries.values()) {
      const spec = catalog.upstreams.get(e.ref.upstream);
      const before = e.connection.spec;
      if (!spec || JSON.stringify({ ...spec, where: "" }) !== JSON.stringify({ ...before, where: "" })) {
        stale.push(e);
      }
    }
    await Promise.all(stale.map((e) => this.closeEntry(e)));
  }

  /** Ends every instance, and waits for those already ending (a process left mid-way would outlive us). */
  async close(): Promise<void> {
    await Promise.all([...this.entries.values()].map((e) => this.closeEntry(e, true)));
    await Promise.all([...this.ending]);
    this.dirs.releaseAll();
  }
}
