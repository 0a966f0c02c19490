/** @module Every upstream's long-lived connections: one shared, plus per-credential or per-session instances. */
import type { Inventory, UpstreamState } from "../catalog/inventory.js";
import type { Catalog } from "../catalog/types.js";
import { redact } from "../config/env.js";
import type { Logger } from "../log.js";
import { type ConnectionHooks, UpstreamConnection } from "./connection.js";
import type { Variant } from "./transport.js";

export interface PoolOptions {
  readonly clientName: string;
  readonly clientVersion: string;
  readonly logger: Logger;
  /** How long an unused per-credential instance is kept before it is closed. */
  readonly idleInstanceMs?: number;
}

/** Which connection of an upstream: `shared`, `cred:<digest>` or `session:<id>`. */
export interface Instance {
  readonly key: string;
  readonly variant?: Variant;
}
export const SHARED: Instance = Object.freeze({ key: "shared" });

/** `name#key`: how traffic and logs tell instances apart (never contains a credential). */
export function instanceId(name: string, key: string): string {
  return `${name}#${key}`;
}

type Listener = (upstream: string, state: UpstreamState, key: string) => void;

export type PoolHooks = Omit<ConnectionHooks, "onInventory" | "onNotification" | "onServerRequest"> & {
  /** An instance was closed and forgotten (reaped, refused, replaced by a reload). */
  onClosed?(id: string): void;
  onNotification?(
    id: string,
    notification: Parameters<NonNullable<ConnectionHooks["onNotification"]>>[1],
  ): void;
  onServerRequest?(
    id: string,
    request: { method: string; params?: unknown },
    signal: AbortSignal,
  ): Promise<unknown>;
};

export class TooManyInstances extends Error {}

export class UpstreamPool {
  private readonly connections = new Map<string, UpstreamConnection>();
  private readonly listeners = new Set<Listener>();
  private readonly reapers = new Map<string, NodeJS.Timeout>();

  constructor(
    private catalog: Catalog,
    private readonly options: PoolOptions,
    private readonly hooks: PoolHooks = {},
  ) {}

  /** Called whenever an upstream instance's inventory or availability changes. */
  onChange(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  connection(name: string, instance: Instance = SHARED): UpstreamConnection {
    const id = instanceId(name, instance.key);
    let c = this.connections.get(id);
    if (!c) {
      const spec = this.catalog.upstreams.get(name);
      if (!spec) throw new Error(`unknown upstream ${name}`);
      if (instance.key !== "shared") {
        const running = [...this.connections.keys()].filter(
          (k) => k.startsWith(`${name}#`) && !k.endsWith("#shared"),
        ).length;
        if (running >= spec.maxInstances) {
          throw new TooManyInstances(
            `upstream ${name} already runs ${running} isolated instances (max_instances: ${spec.maxInstances})`,
          );
        }
      }
      const { onNotification, onServerRequest, onClosed: _closed, ...rest } = this.hooks;
      const secrets = new Map(this.catalog.secrets);
      for (const [k, v] of Object.entries({ ...instance.variant?.headers, ...instance.variant?.env })) {
        if (v.length >= 4) secrets.set(v, `<${k}>`);
      }
      c = new UpstreamConnection(spec, {
        ...this.options,
        redact: (text) => redact(text, secrets),
        ...(instance.variant ? { variant: instance.variant } : {}),
        ...(instance.key !== "shared" ? { label: instance.key.split(":")[0]! } : {}),
        hooks: {
          ...rest,
          onInventory: (n, state) => this.emit(n, state, instance.key),
          ...(onNotification
            ? { onNotification: (_n, notification) => onNotification(id, notification) }
            : {}),
          ...(onServerRequest
            ? { onServerRequest: (_n, request, signal) => onServerRequest(id, request, signal) }
            : {}),
        },
      });
      this.connections.set(id, c);
    }
    return c;
  }

  private forget(id: string): void {
    this.connections.delete(id);
    this.hooks.onClosed?.(id);
  }

  /** The connection of an instance id (`name#key`) if it exists; never creates one. */
  existing(id: string): UpstreamConnection | undefined {
    return this.connections.get(id);
  }

  /** A session starts using an instance; isolated instances are counted so they can be reaped. */
  acquire(name: string, instance: Instance): UpstreamConnection {
    const c = this.connection(name, instance);
    c.users++;
    const id = instanceId(name, instance.key);
    clearTimeout(this.reapers.get(id));
    this.reapers.delete(id);
    return c;
  }

  /** A session stops using an instance: a per-session one closes now, a per-credential one when idle. */
  release(name: string, instance: Instance): void {
    const id = instanceId(name, instance.key);
    const c = this.connections.get(id);
    if (!c || instance.key === "shared") return;
    c.users = Math.max(0, c.users - 1);
    if (c.users > 0) return;
    const close = () => {
      this.reapers.delete(id);
      if (c.users > 0 || this.connections.get(id) !== c) return;
      this.forget(id);
      void c.close();
    };
    if (instance.key.startsWith("session:")) close();
    else {
      const timer = setTimeout(close, this.options.idleInstanceMs ?? 60_000);
      timer.unref();
      this.reapers.set(id, timer);
    }
  }

  /**
   * Starts what these upstreams need (in parallel) and returns their inventory. With `restart: false` an
   * upstream that failed is reported as it is rather than restarted (a report is not a use).
   */
  async ensure(
    names: Iterable<string>,
    instances: ReadonlyMap<string, Instance> = new Map(),
    restart = true,
  ): Promise<Inventory> {
    const list = [...new Set(names)];
    // Every instance is made (or refused) before any starts: a refusal must not leave others half-made.
    const made: string[] = [];
    let connections: UpstreamConnection[];
    try {
      connections = list.map((n) => {
        const instance = instances.get(n) ?? SHARED;
        const id = instanceId(n, instance.key);
        if (!this.connections.has(id)) made.push(id);
        return this.connection(n, instance);
      });
    } catch (err) {
      for (const id of made) {
        const c = this.connections.get(id);
        if (!c || id.endsWith("#shared") || c.users > 0) continue;
        this.forget(id);
        void c.close();
      }
      throw err;
    }
    const states = await Promise.all(connections.map((c) => c.ensure(restart)));
    return new Map(list.map((n, i) => [n, states[i]!]));
  }

  refresh(name: string, instance: Instance = SHARED): Promise<UpstreamState> {
    return this.connection(name, instance).refresh();
  }

  /** Process ids of running stdio upstream instances (for tests and shutdown checks). */
  pids(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [id, c] of this.connections) {
      const pid = c.pid();
      if (pid && c.state?.status === "ready") out[id] = pid;
    }
    return out;
  }

  /** Every instance with its state, for /metrics and health reporting. */
  instances(): { id: string; name: string; state: UpstreamState | undefined }[] {
    return [...this.connections].map(([id, c]) => ({ id, name: c.spec.name, state: c.state }));
  }

  /** A reload swaps the catalog: instances whose spec changed or vanished are closed (restarted on next use). */
  async setCatalog(catalog: Catalog): Promise<void> {
    this.catalog = catalog;
    const stale: UpstreamConnection[] = [];
    for (const [id, c] of this.connections) {
      const spec = catalog.upstreams.get(c.spec.name);
      if (!spec || JSON.stringify({ ...spec, where: "" }) !== JSON.stringify({ ...c.spec, where: "" })) {
        this.forget(id);
        stale.push(c);
      }
    }
    await Promise.all(stale.map((c) => c.close()));
  }

  async close(): Promise<void> {
    for (const t of this.reapers.values()) clearTimeout(t);
    this.reapers.clear();
    await Promise.all([...this.connections.values()].map((c) => c.close()));
    this.connections.clear();
  }

  private emit(name: string, state: UpstreamState, key: string): void {
    for (const l of this.listeners) l(name, state, key);
  }
}
