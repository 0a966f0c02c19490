/** @module Every upstream's one long-lived connection, started the first time an active toolset needs it. */
import type { Inventory, UpstreamState } from "../catalog/inventory.js";
import type { Catalog } from "../catalog/types.js";
import type { Logger } from "../log.js";
import { type ConnectionHooks, UpstreamConnection } from "./connection.js";

export interface PoolOptions {
  readonly clientName: string;
  readonly clientVersion: string;
  readonly logger: Logger;
}

type Listener = (upstream: string, state: UpstreamState) => void;

export class UpstreamPool {
  private readonly connections = new Map<string, UpstreamConnection>();
  private readonly listeners = new Set<Listener>();
  private readonly hooks: ConnectionHooks;

  constructor(
    private catalog: Catalog,
    private readonly options: PoolOptions,
    hooks: Omit<ConnectionHooks, "onInventory"> = {},
  ) {
    this.hooks = { ...hooks, onInventory: (name, state) => this.emit(name, state) };
  }

  /** Called whenever an upstream's inventory or availability changes. */
  onChange(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  connection(name: string): UpstreamConnection {
    let c = this.connections.get(name);
    if (!c) {
      const spec = this.catalog.upstreams.get(name);
      if (!spec) throw new Error(`unknown upstream ${name}`);
      c = new UpstreamConnection(spec, { ...this.options, hooks: this.hooks });
      this.connections.set(name, c);
    }
    return c;
  }

  /** Starts what these upstreams need (in parallel) and returns the inventory of all known upstreams. */
  async ensure(names: Iterable<string>): Promise<Inventory> {
    await Promise.all([...new Set(names)].map((n) => this.connection(n).ensure()));
    return this.inventory();
  }

  refresh(name: string): Promise<UpstreamState> {
    return this.connection(name).refresh();
  }

  /** A snapshot: the last state of every upstream that was ever started. */
  inventory(): Inventory {
    const m = new Map<string, UpstreamState>();
    for (const [name, c] of this.connections) if (c.state) m.set(name, c.state);
    return m;
  }

  /** Process ids of running stdio upstreams (for tests and shutdown checks). */
  pids(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [name, c] of this.connections) {
      const pid = c.pid();
      if (pid && c.state?.status === "ready") out[name] = pid;
    }
    return out;
  }

  async close(): Promise<void> {
    await Promise.all([...this.connections.values()].map((c) => c.close()));
    this.connections.clear();
  }

  private emit(name: string, state: UpstreamState): void {
    for (const l of this.listeners) l(name, state);
  }
}
