/** @module The two Redis connections of a store (commands, and ended-id messages), with bounded failure and health. */
import { createHash } from "node:crypto";
import { Redis, type RedisOptions } from "ioredis";
import { redactUrl, StoreUnavailableError } from "./errors.js";
import type { StoreHealth } from "./types.js";

export interface RedisLinkOptions {
  readonly url: string;
  /** The URL with its password redacted. */
  readonly description: string;
  /** Every command and the first connection settle within this. */
  readonly timeoutMs: number;
  readonly connectionName: string;
  /** Told on every change of health, with the reason when down. */
  readonly onHealth?: (health: StoreHealth, reason?: string) => void;
}

/** Reply errors that mean "Redis cannot serve now", as opposed to a wrong command. */
const UNAVAILABLE_REPLY =
  /^(OOM|LOADING|BUSY|READONLY|MASTERDOWN|NOAUTH|WRONGPASS|NOPERM|CLUSTERDOWN|TRYAGAIN)\b/;

/** Reconnect at 100 ms, then doubling to at most 2 s: recovery follows Redis closely, without a storm. */
const backoff = (times: number) => Math.min(100 * 2 ** Math.min(times - 1, 5), 2000);

export class RedisLink {
  private stalled = false;
  /** Health changes are told only once open() has succeeded: connecting is not an outage. */
  private live = false;
  private reported: StoreHealth = "up";
  private lastReason: string | undefined;
  private readonly shas = new Map<string, string>();

  private constructor(
    readonly main: Redis,
    readonly sub: Redis,
    private readonly options: RedisLinkOptions,
  ) {
    for (const client of [main, sub]) {
      // Without a listener ioredis prints every reconnect failure itself; here each becomes a health change.
      client.on("error", (e: Error) => {
        this.lastReason = this.redact(e.message);
        this.report();
      });
      for (const event of ["ready", "close", "reconnecting", "end"]) client.on(event, () => this.report());
    }
  }

  /**
   * Connects both. When Redis cannot be reached within the timeout: with `wait` (the default), rejects with
   * StoreUnavailableError and leaves nothing running; without, returns a link that is down and keeps
   * reconnecting in the background (health tells when it is up).
   */
  static async open(options: RedisLinkOptions, wait = true): Promise<RedisLink> {
    const settings: RedisOptions = {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.timeoutMs,
      connectTimeout: options.timeoutMs,
      autoResubscribe: false,
      retryStrategy: backoff,
      connectionName: options.connectionName,
    };
    const main = new Redis(options.url, settings);
    const sub = new Redis(options.url, settings);
    const link = new RedisLink(main, sub, options);
    try {
      await withTimeout(Promise.all([main.connect(), sub.connect()]), options.timeoutMs);
    } catch (e) {
      const error = link.unavailable("connect", link.lastReason ? new Error(link.lastReason) : e);
      if (wait) {
        main.disconnect();
        sub.disconnect();
        throw error;
      }
      // ioredis goes on reconnecting after a failed first connect (retryStrategy): report down, then changes.
      link.reported = "up";
      link.live = true;
      link.report();
      return link;
    }
    link.live = true;
    return link;
  }

  health(): StoreHealth {
    return this.main.status === "ready" && this.sub.status === "ready" && !this.stalled ? "up" : "down";
  }

  /** Runs a command; any failure becomes StoreUnavailableError (or a plain Error for a wrong command). */
  async call<T>(operation: string, fn: (r: Redis) => Promise<T>): Promise<T> {
    try {
      const out = await fn(this.main);
      if (this.stalled) {
        this.stalled = false;
        this.report();
      }
      return out;
    } catch (e) {
      if (e instanceof Error && /Command timed out/.test(e.message)) {
        this.stalled = true;
        this.lastReason = "command timed out";
        this.report();
      }
      throw this.unavailable(operation, e);
    }
  }

  /** EVALSHA, falling back to EVAL once when Redis does not know the script (it restarted, or first use). */
  async script(operation: string, lua: string, args: readonly (string | number)[]): Promise<unknown> {
    const sha = this.shas.get(lua) ?? createHash("sha1").update(lua).digest("hex");
    this.shas.set(lua, sha);
    return this.call(operation, async (r) => {
      try {
        return await r.evalsha(sha, 0, ...args);
      } catch (e) {
        if (e instanceof Error && e.message.startsWith("NOSCRIPT")) return r.eval(lua, 0, ...args);
        throw e;
      }
    });
  }

  close(): void {
    this.main.disconnect();
    this.sub.disconnect();
  }

  unavailable(operation: string, e: unknown): Error {
    const message = this.redact(e instanceof Error ? e.message : String(e));
    if (e instanceof Error && e.name === "ReplyError" && !UNAVAILABLE_REPLY.test(e.message)) {
      return new Error(`state store ${this.options.description} (${operation}): ${message}`);
    }
    // The cause is rebuilt from the message alone: ioredis errors carry the command's arguments (values).
    const cause = new Error(message);
    return new StoreUnavailableError(this.options.description, operation, message, { cause });
  }

  private redact(text: string): string {
    const password = safePassword(this.options.url);
    // As the config's own redaction does: a value shorter than 4 characters would mangle every message.
    const out = password.length >= 4 ? text.split(password).join("***") : text;
    return out.split(this.options.url).join(redactUrl(this.options.url));
  }

  private report(): void {
    if (!this.live) return;
    const now = this.health();
    if (now === this.reported) return;
    this.reported = now;
    this.options.onHealth?.(now, now === "down" ? (this.lastReason ?? this.main.status) : undefined);
  }
}

function safePassword(url: string): string {
  try {
    return decodeURIComponent(new URL(url).password);
  } catch {
    return "";
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no connection within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
