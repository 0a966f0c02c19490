/** @module The in-process state store: one replica, the same contract and byte accounting as Redis. */
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
import type { PutResult, StateStore, StateUsage, StoredValue, ValueInfo } from "./types.js";

interface Entry {
  readonly owner: string;
  readonly key: string;
  /** UTF-8, off the JS heap: what the budget counts is what the process holds (a string may take twice). */
  readonly body: Buffer;
  readonly info: string;
  readonly size: number;
  readonly expiresAt: number;
  /** Insertion order across owners (as Redis's `seq`). */
  readonly seq: number;
}

export interface MemoryStoreOptions {
  readonly limits: StateLimits;
  /** The clock (ms); tests pass a fake one. */
  readonly now?: () => number;
}

const id = (owner: string, key: string) => `${owner}:${key}`;

export class MemoryStateStore implements StateStore {
  readonly description = "memory";
  readonly shared = false;
  private readonly limits: StateLimits;
  private readonly now: () => number;
  /** Every value in insertion order: the total budget evicts from its front. */
  private readonly all = new Map<string, Entry>();
  /** Per owner, keys in insertion order: the owner budget evicts from its front. */
  private readonly owners = new Map<string, Map<string, Entry>>();
  private readonly ownerBytes = new Map<string, number>();
  private total = 0;
  private seq = 0;
  /** No entry expires before this: a put skips the sweep until then. */
  private nextExpiry = Number.POSITIVE_INFINITY;
  private readonly ended: EndedSet;
  private readonly records = new Map<string, { value: string; expiresAt: number }>();
  /** Per owner, its counters (`next`): gone with the owner's values on `clear`. */
  private readonly counters = new Map<string, Map<string, number>>();
  private closed = false;

  constructor(options: MemoryStoreOptions) {
    this.limits = options.limits;
    this.now = options.now ?? Date.now;
    this.ended = new EndedSet(options.limits.maxEnded);
  }

  async put(owner: string, key: string, value: StoredValue, ttlMs: number): Promise<PutResult> {
    this.open("put");
    checkOwner(owner, key);
    checkTtl(ttlMs);
    const encoded = encodeValue(value);
    this.sweep();
    this.drop(owner, key);
    const { maxOwnerBytes, maxTotalBytes } = this.limits;
    if (encoded.size > maxOwnerBytes || encoded.size > maxTotalBytes) {
      return { stored: false, size: encoded.size, reason: "too_large" };
    }
    const evicted: string[] = [];
    const mine = this.owners.get(owner);
    const oldestOfOwner = () => mine?.keys().next().value as string | undefined;
    while ((this.ownerBytes.get(owner) ?? 0) + encoded.size > maxOwnerBytes) {
      const k = oldestOfOwner();
      if (k === undefined) break;
      this.drop(owner, k);
      evicted.push(k);
    }
    while (this.total + encoded.size > maxTotalBytes) {
      const victim = this.victim();
      if (!victim) break;
      this.drop(victim.owner, victim.key);
      if (victim.owner === owner) evicted.push(victim.key);
    }
    const entry: Entry = {
      owner,
      key,
      body: Buffer.from(encoded.body),
      info: encoded.info,
      size: encoded.size,
      expiresAt: this.now() + ttlMs,
      seq: ++this.seq,
    };
    this.all.set(id(owner, key), entry);
    const map = this.owners.get(owner) ?? new Map<string, Entry>();
    this.owners.set(owner, map);
    map.set(key, entry);
    this.ownerBytes.set(owner, (this.ownerBytes.get(owner) ?? 0) + encoded.size);
    this.total += encoded.size;
    this.nextExpiry = Math.min(this.nextExpiry, entry.expiresAt);
    return { stored: true, size: encoded.size, evicted };
  }

  async get(owner: string, key: string): Promise<StoredValue | undefined> {
    this.open("get");
    checkOwner(owner, key);
    const e = this.live(owner, key);
    return e && decodeValue(e.body.toString(), e.info);
  }

  async list(owner: string): Promise<readonly ValueInfo[]> {
    this.open("list");
    checkOwner(owner);
    this.sweep();
    return [...(this.owners.get(owner)?.values() ?? [])].map((e) => decodeInfo(e.key, e.size, e.info));
  }

  async delete(owner: string, key: string): Promise<boolean> {
    this.open("delete");
    checkOwner(owner, key);
    const was = this.live(owner, key) !== undefined;
    this.drop(owner, key);
    return was;
  }

  async clear(owner: string): Promise<void> {
    this.open("clear");
    checkOwner(owner);
    for (const key of [...(this.owners.get(owner)?.keys() ?? [])]) this.drop(owner, key);
    this.counters.delete(owner);
  }

  async next(owner: string, counter: string, _ttlMs: number): Promise<number> {
    this.open("next");
    checkOwner(owner, counter);
    const mine = this.counters.get(owner) ?? new Map<string, number>();
    this.counters.set(owner, mine);
    const n = (mine.get(counter) ?? 0) + 1;
    mine.set(counter, n);
    return n;
  }

  async usage(owner: string): Promise<StateUsage> {
    this.open("usage");
    checkOwner(owner);
    this.sweep();
    return { owner: this.ownerBytes.get(owner) ?? 0, total: this.total };
  }

  async end(sessionId: string): Promise<void> {
    this.ended.addId(sessionId);
    this.open("end");
  }

  isEnded(sessionId: string): boolean {
    return this.ended.has(sessionId);
  }

  forgottenUntil(): number | undefined {
    return this.ended.forgottenUntil;
  }

  async kvGet(namespace: string, key: string): Promise<string | undefined> {
    this.open("kvGet");
    checkNamespace(namespace);
    const k = `${namespace}:${digest(key)}`;
    const r = this.records.get(k);
    if (r && r.expiresAt <= this.now()) this.records.delete(k);
    return r && r.expiresAt > this.now() ? r.value : undefined;
  }

  async kvPut(namespace: string, key: string, value: string, ttlMs: number): Promise<void> {
    this.open("kvPut");
    checkNamespace(namespace);
    checkTtl(ttlMs);
    if (Buffer.byteLength(value) > this.limits.maxRecordBytes) {
      throw new RangeError(`state record over ${this.limits.maxRecordBytes} bytes`);
    }
    const k = `${namespace}:${digest(key)}`;
    this.records.delete(k);
    this.records.set(k, { value, expiresAt: this.now() + ttlMs });
    if (this.records.size > this.limits.maxRecords) {
      this.records.delete(this.records.keys().next().value as string);
    }
  }

  async kvDelete(namespace: string, key: string): Promise<boolean> {
    this.open("kvDelete");
    checkNamespace(namespace);
    const k = `${namespace}:${digest(key)}`;
    const r = this.records.get(k);
    this.records.delete(k);
    return r !== undefined && r.expiresAt > this.now();
  }

  health(): "up" | "down" {
    return this.closed ? "down" : "up";
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private open(operation: string): void {
    if (this.closed) throw new StoreUnavailableError(this.description, operation, "closed");
  }

  /** The entry when it is there and not expired (an expired one is dropped on the way). */
  private live(owner: string, key: string): Entry | undefined {
    const e = this.owners.get(owner)?.get(key);
    if (e && e.expiresAt <= this.now()) {
      this.drop(owner, key);
      return undefined;
    }
    return e;
  }

  private drop(owner: string, key: string): void {
    const map = this.owners.get(owner);
    const e = map?.get(key);
    if (!map || !e) return;
    map.delete(key);
    this.all.delete(id(owner, key));
    const left = (this.ownerBytes.get(owner) ?? 0) - e.size;
    if (map.size === 0) {
      this.owners.delete(owner);
      this.ownerBytes.delete(owner);
    } else this.ownerBytes.set(owner, left);
    this.total -= e.size;
  }

  /**
   * Past the total: the oldest value of the owner holding the most; among owners holding the same (the first
   * 16 by id, as Redis's ZRANGEBYSCORE gives them), the one whose oldest value is the oldest.
   */
  private victim(): Entry | undefined {
    let most = -1;
    for (const bytes of this.ownerBytes.values()) most = Math.max(most, bytes);
    let tied: string[] = [];
    for (const [o, bytes] of this.ownerBytes) if (bytes === most) tied.push(o);
    if (tied.length > 16) tied = tied.sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)).slice(0, 16);
    let best: Entry | undefined;
    for (const o of tied) {
      const first = this.owners.get(o)?.values().next().value as Entry | undefined;
      if (first && (!best || first.seq < best.seq)) best = first;
    }
    return best;
  }

  private sweep(): void {
    const now = this.now();
    if (now < this.nextExpiry) return;
    let next = Number.POSITIVE_INFINITY;
    for (const e of [...this.all.values()]) {
      if (e.expiresAt <= now) this.drop(e.owner, e.key);
      else next = Math.min(next, e.expiresAt);
    }
    this.nextExpiry = next;
  }
}
