/** @module The Redis state store: values and budgets shared by every replica, ended ids pushed to each one. */
import {
  checkNamespace,
  checkOwner,
  checkTtl,
  decodeInfo,
  decodeValue,
  digest,
  encodeValue,
} from "./codec.js";
import type { StateLimits } from "./config.js";
import { EndedSet } from "./ended.js";
import { StoreUnavailableError } from "./errors.js";
import { RedisLink } from "./redis-link.js";
import { CLEAR, DELETE, END, GET, LIST, NEXT, PUT, USAGE } from "./redis-scripts.js";
import type { PutResult, StateStore, StateUsage, StoredValue, StoreHealth, ValueInfo } from "./types.js";

export interface RedisStoreOptions {
  readonly url: string;
  readonly description: string;
  /** The deployment's `name:`: every key starts `toolpacks:<name>:`. */
  readonly name: string;
  readonly limits: StateLimits;
  readonly timeoutMs: number;
  readonly onHealth?: (health: StoreHealth, reason?: string) => void;
}

export class RedisStateStore implements StateStore {
  readonly shared = true;
  private readonly prefix: string;
  private readonly ended: EndedSet;
  /** Digests ended here while Redis was unavailable, not yet published. */
  private readonly unsent = new Set<string>();
  private closed = false;

  private constructor(
    private readonly link: RedisLink,
    private readonly options: RedisStoreOptions,
  ) {
    this.prefix = `toolpacks:${options.name}:`;
    this.ended = new EndedSet(options.limits.maxEnded);
  }

  get description(): string {
    return this.options.description;
  }

  /**
   * Connects, subscribes to ended ids and loads those Redis remembers, then returns. When Redis cannot be
   * reached within the timeout: with `wait` (the default) rejects with StoreUnavailableError (it does not
   * fall back to memory); without, returns a store that is down and comes up by itself when Redis does.
   */
  static async open(options: RedisStoreOptions, wait = true): Promise<RedisStateStore> {
    const link = await RedisLink.open(
      {
        url: options.url,
        description: options.description,
        timeoutMs: options.timeoutMs,
        connectionName: `toolpacks:${options.name}`,
        ...(options.onHealth && { onHealth: options.onHealth }),
      },
      wait,
    );
    const store = new RedisStateStore(link, options);
    const channel = store.channel;
    link.sub.on("message", (from: string, d: string) => {
      if (from === channel) store.ended.addDigest(d);
    });
    if (link.health() === "up") {
      try {
        await store.listen();
      } catch (e) {
        if (wait) {
          link.close();
          throw e;
        }
      }
    }
    // After a reconnect (or the first connect of a store opened down): subscribe again, then reload what was
    // ended meanwhile. Subscribing first means an id ended between the two steps arrives by one path or the other.
    link.sub.on("ready", () => void store.listen().catch(() => {}));
    link.main.on("ready", () => void store.recover().catch(() => {}));
    return store;
  }

  async put(owner: string, key: string, value: StoredValue, ttlMs: number): Promise<PutResult> {
    checkOwner(owner, key);
    checkTtl(ttlMs);
    const e = encodeValue(value);
    const { maxOwnerBytes, maxTotalBytes } = this.options.limits;
    const out = (await this.script("put", PUT, [
      owner,
      key,
      e.body,
      e.info,
      e.size,
      ttlMs,
      maxOwnerBytes,
      maxTotalBytes,
    ])) as [number, ...string[]];
    if (out[0] !== 1) return { stored: false, size: e.size, reason: "too_large" };
    return { stored: true, size: e.size, evicted: out.slice(1) as string[] };
  }

  async get(owner: string, key: string): Promise<StoredValue | undefined> {
    checkOwner(owner, key);
    const out = (await this.script("get", GET, [owner, key])) as string[];
    if (out.length < 2) return undefined;
    return decodeValue(out[0]!, afterSize(out[1]!).info);
  }

  async list(owner: string): Promise<readonly ValueInfo[]> {
    checkOwner(owner);
    const out = (await this.script("list", LIST, [owner])) as string[];
    const infos: ValueInfo[] = [];
    for (let i = 0; i + 1 < out.length; i += 2) {
      const { size, info } = afterSize(out[i + 1]!);
      infos.push(decodeInfo(out[i]!, size, info));
    }
    return infos;
  }

  async delete(owner: string, key: string): Promise<boolean> {
    checkOwner(owner, key);
    return (await this.script("delete", DELETE, [owner, key])) === 1;
  }

  async clear(owner: string): Promise<void> {
    checkOwner(owner);
    await this.script("clear", CLEAR, [owner]);
  }

  async next(owner: string, counter: string, ttlMs: number): Promise<number> {
    checkOwner(owner, counter);
    checkTtl(ttlMs);
    return Number(await this.script("next", NEXT, [owner, counter, ttlMs]));
  }

  async usage(owner: string): Promise<StateUsage> {
    checkOwner(owner);
    const [own, total] = (await this.script("usage", USAGE, [owner])) as [number, number];
    return { owner: own, total };
  }

  async end(sessionId: string): Promise<void> {
    const d = this.ended.addId(sessionId);
    try {
      await this.publishEnd(d);
    } catch (e) {
      // Told to the other replicas once Redis is back (bounded like the set itself).
      this.unsent.add(d);
      if (this.unsent.size > this.options.limits.maxEnded) {
        this.unsent.delete(this.unsent.values().next().value as string);
      }
      throw e;
    }
  }

  /** Records and publishes an end; Redis answers how far back it still remembers ends (its horizon). */
  private async publishEnd(d: string): Promise<void> {
    const horizon = Number(await this.script("end", END, [d, this.options.limits.maxEnded]));
    if (horizon > 0) this.ended.forget(horizon);
  }

  /** Publishes the ends that failed while Redis was away, then loads what others ended meanwhile. */
  private async recover(): Promise<void> {
    for (const d of [...this.unsent]) {
      await this.publishEnd(d);
      this.unsent.delete(d);
    }
    await this.reload();
  }

  isEnded(sessionId: string): boolean {
    return this.ended.has(sessionId);
  }

  forgottenUntil(): number | undefined {
    return this.ended.forgottenUntil;
  }

  async kvGet(namespace: string, key: string): Promise<string | undefined> {
    checkNamespace(namespace);
    this.open("kvGet");
    const v = await this.link.call("kvGet", (r) => r.get(this.kvKey(namespace, key)));
    return v ?? undefined;
  }

  async kvPut(namespace: string, key: string, value: string, ttlMs: number): Promise<void> {
    checkNamespace(namespace);
    checkTtl(ttlMs);
    if (Buffer.byteLength(value) > this.options.limits.maxRecordBytes) {
      throw new RangeError(`state record over ${this.options.limits.maxRecordBytes} bytes`);
    }
    this.open("kvPut");
    await this.link.call("kvPut", (r) => r.set(this.kvKey(namespace, key), value, "PX", ttlMs));
  }

  async kvDelete(namespace: string, key: string): Promise<boolean> {
    checkNamespace(namespace);
    this.open("kvDelete");
    return (await this.link.call("kvDelete", (r) => r.del(this.kvKey(namespace, key)))) === 1;
  }

  health(): StoreHealth {
    return this.closed ? "down" : this.link.health();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.link.close();
  }

  private kvKey(namespace: string, key: string): string {
    return `${this.prefix}kv:${namespace}:${digest(key)}`;
  }

  private open(operation: string): void {
    if (this.closed) throw new StoreUnavailableError(this.description, operation, "closed");
  }

  private script(operation: string, lua: string, args: readonly (string | number)[]): Promise<unknown> {
    this.open(operation);
    return this.link.script(operation, lua, [this.prefix, ...args]);
  }

  private get channel(): string {
    return `${this.prefix}ended`;
  }

  private async listen(): Promise<void> {
    await this.link.call("subscribe", () => this.link.sub.subscribe(this.channel));
    await this.reload();
  }

  /**
   * Loads the ended ids Redis remembers, with when each ended, and the latest end it forgot (for a replica that
   * starts, or reconnects, after they ended).
   */
  private async reload(): Promise<void> {
    const max = this.options.limits.maxEnded;
    const [ends, horizon] = await this.link.call("reload", (r) =>
      Promise.all([r.zrange(this.channel, -max, "-1", "WITHSCORES"), r.get(`${this.channel}:forgotten`)]),
    );
    for (const [d, at] of scored(ends)) this.ended.addDigest(d, at);
    if (horizon) this.ended.forget(Number(horizon));
  }
}

/** A WITHSCORES reply as pairs: flat (RESP2) or nested (RESP3). */
function scored(reply: unknown): [string, number][] {
  const items = Array.isArray(reply) ? (reply as unknown[]) : [];
  if (items.every(Array.isArray))
    return (items as [unknown, unknown][]).map(([m, score]) => [String(m), Number(score)]);
  const out: [string, number][] = [];
  for (let i = 0; i + 1 < items.length; i += 2) out.push([String(items[i]), Number(items[i + 1])]);
  return out;
}

/** `<size>|<info>` as the scripts store it. */
function afterSize(stored: string): { size: number; info: string } {
  const bar = stored.indexOf("|");
  return { size: Number(stored.slice(0, bar)), info: stored.slice(bar + 1) };
}
