/** @module The shared state store's one interface: captured values, ended session ids, small records. */

/** A captured value as the caller gives it and gets it back. */
export interface StoredValue {
  /** The text form (what a string parameter receives). */
  readonly text: string;
  /** The structured form, when there is one (what an object or array parameter receives). */
  readonly structured?: unknown;
  /** The size the caller reports to the client (its own measure; the budget uses the stored size). */
  readonly bytes: number;
  /** Small, JSON-serializable facts about the value (e.g. the tool that produced it). */
  readonly meta: Readonly<Record<string, unknown>>;
}

/** One entry of `list(owner)`: what a listing shows without reading the values. */
export interface ValueInfo {
  readonly key: string;
  readonly bytes: number;
  /** Bytes this entry occupies in the store: what the budgets count. */
  readonly size: number;
  readonly meta: Readonly<Record<string, unknown>>;
}

export type PutResult =
  | {
      readonly stored: true;
      readonly size: number;
      /** Keys of this owner's values evicted to make room (oldest first). */
      readonly evicted: readonly string[];
    }
  /** The value alone is larger than the per-owner or the total budget: nothing was stored or evicted. */
  | { readonly stored: false; readonly size: number; readonly reason: "too_large" };

export interface StateUsage {
  /** Stored bytes of this owner's values. */
  readonly owner: number;
  /** Stored bytes of every owner's values, across every replica that shares the store. */
  readonly total: number;
}

export type StoreHealth = "up" | "down";

/**
 * Where captured values, ended session ids and small records live: process memory (one replica) or Redis
 * (shared by every replica of a deployment). Every method that needs Redis either settles within the
 * store's command timeout or rejects with `StoreUnavailableError`; none waits for Redis to come back.
 *
 * `owner` is an opaque digest (of a session, credential or principal); it is part of keys and never a
 * secret itself. Values are stored as given: a caller that stores a secret (a token) encrypts it first.
 */
export interface StateStore {
  /** "memory", or the Redis URL with its password redacted. For logs and errors. */
  readonly description: string;
  /** True when other replicas see the same values and ended ids (Redis); false for process memory. */
  readonly shared: boolean;

  /**
   * Stores a value under `owner`/`key` (replacing one there) for `ttlMs`. Its stored size counts against
   * the owner's budget and the total budget; the owner's oldest values are evicted first, then the oldest
   * of any owner when the total is still over. Atomic across replicas. A refused put (too large) leaves
   * nothing under the key.
   */
  put(owner: string, key: string, value: StoredValue, ttlMs: number): Promise<PutResult>;
  /** The value, or undefined when it was never stored, expired or was evicted. */
  get(owner: string, key: string): Promise<StoredValue | undefined>;
  /** The owner's live values, oldest first, without their contents. */
  list(owner: string): Promise<readonly ValueInfo[]>;
  /** Removes one value; true when it was there. */
  delete(owner: string, key: string): Promise<boolean>;
  /** Removes every value of an owner (its session ended), and its counters. */
  clear(owner: string): Promise<void>;
  /**
   * The next number (1, 2, …) of one of an owner's counters, unique across replicas: what names a value
   * (`files/read_file/3`). A counter lives `ttlMs` after its last use (Redis) or until `clear`.
   */
  next(owner: string, counter: string, ttlMs: number): Promise<number>;
  usage(owner: string): Promise<StateUsage>;

  /**
   * Marks a session id ended on every replica (locally at once, then through the store). When the
   * store is unavailable the id is still ended here, the returned promise rejects, and the Redis store
   * tells the other replicas once Redis is back.
   */
  end(sessionId: string): Promise<void>;
  /** A local, synchronous lookup: never waits on the network. */
  isEnded(sessionId: string): boolean;
  /**
   * The latest end (ms) of an ended id this store no longer remembers (pushed out by later ones; with Redis, by
   * any replica), undefined while it forgot none. An id issued by then may have ended: it must not be rebuilt.
   * A local, synchronous lookup.
   */
  forgottenUntil(): number | undefined;

  /** Small records for other subsystems; `namespace` is a fixed label like `oauth`, keys are hashed. */
  kvGet(namespace: string, key: string): Promise<string | undefined>;
  kvPut(namespace: string, key: string, value: string, ttlMs: number): Promise<void>;
  kvDelete(namespace: string, key: string): Promise<boolean>;

  /** "down" while the store cannot be reached (always "up" for memory). Synchronous. */
  health(): StoreHealth;
  /** Closes connections; later calls reject. */
  close(): Promise<void>;
}
