/**
 * @module The one `subscriptions/listen` stream of a 2026-07-28 upstream connection: list changes (each kind the
 * upstream advertises `listChanged` for) and updates of the resources the proxy is subscribed to on this instance.
 * A change of that set opens a new stream with the new filter; the old one is closed once the new one is
 * acknowledged. A stream the upstream ends or that breaks is opened again with a doubling delay, and the lists
 * are read again (a change may have been missed); one the upstream refuses (a JSON-RPC error) is not.
 */

import type { ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { isRecord, META_KEYS } from "../modern/wire.js";
import type { Signal } from "../wire/signal.js";

type Params = Record<string, unknown>;
type Note = { method: string; params?: Params };

export interface SubscriptionFilter {
  toolsListChanged?: true;
  promptsListChanged?: true;
  resourcesListChanged?: true;
  resourceSubscriptions?: string[];
}

export interface ListenDeps {
  readonly capabilities: ServerCapabilities;
  /**
   * Sends `subscriptions/listen` with this id and filter; settles when the stream ends (its result: a graceful
   * end). What the stream carries goes to `onNotification` (over HTTP it is tied to the request).
   */
  open(
    id: string,
    filter: SubscriptionFilter,
    signal: Signal,
    onNotification: (n: Note) => void,
  ): Promise<Params>;
  /** A list changed upstream. */
  readonly onListChanged: () => void;
  /** A notification to hand on (list changes and resource updates, subscription id removed). */
  readonly onNotification: (n: Note) => void;
  readonly onRefused: (reason: string) => void;
  readonly reopenDelayMs?: number;
}

interface Stream {
  readonly id: string;
  readonly controller: AbortController;
  readonly acked: Promise<SubscriptionFilter>;
  ack(filter: SubscriptionFilter): void;
  fail(err: unknown): void;
}

const MAX_DELAY_MS = 30_000;
/** JSON-RPC codes that mean the connection, not the upstream, ended the stream. */
const TRANSPORT_CODES: ReadonlySet<number> = new Set([-32000, -32001]);

export class Listener {
  private readonly uris = new Set<string>();
  private readonly streams = new Map<string, Stream>();
  private current: Stream | undefined;
  /** The stream opened last: it takes over when the current one ends before it is acknowledged. */
  private latest: Stream | undefined;
  private seq = 0;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: ListenDeps) {}

  /** The resource URIs this connection listens for. */
  get subscriptions(): readonly string[] {
    return [...this.uris];
  }

  /** Opens the stream (if the upstream advertises anything to listen for). */
  start(): void {
    void this.open(false).honoured.catch(() => {});
  }

  /** Adds a URI to the filter; resolves once the upstream acknowledged it, rejects if it did not take it. */
  subscribe(uri: string, timeoutMs: number): Promise<void> {
    return this.serial(async () => {
      if (this.uris.has(uri)) return;
      this.uris.add(uri);
      try {
        const honoured = await this.reopen(timeoutMs);
        if (!honoured?.resourceSubscriptions?.includes(uri))
          throw new Error(`the upstream did not accept a subscription to ${uri}`);
      } catch (err) {
        this.uris.delete(uri);
        throw err;
      }
    });
  }

  unsubscribe(uri: string, timeoutMs: number): Promise<void> {
    return this.serial(async () => {
      if (!this.uris.delete(uri)) return;
      await this.reopen(timeoutMs).catch(() => {});
    });
  }

  private serial(task: () => Promise<void>): Promise<void> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => {});
    return run;
  }

  private filter(): SubscriptionFilter | undefined {
    const caps = this.deps.capabilities;
    const f: SubscriptionFilter = {
      ...(caps.tools?.listChanged ? { toolsListChanged: true as const } : {}),
      ...(caps.prompts?.listChanged ? { promptsListChanged: true as const } : {}),
      ...(caps.resources?.listChanged ? { resourcesListChanged: true as const } : {}),
      ...(caps.resources?.subscribe && this.uris.size ? { resourceSubscriptions: [...this.uris] } : {}),
    };
    return Object.keys(f).length ? f : undefined;
  }

  private async reopen(timeoutMs: number): Promise<SubscriptionFilter | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`subscriptions/listen not acknowledged within ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    const { stream, honoured } = this.open(false);
    try {
      return await Promise.race([honoured, limit]);
    } catch (err) {
      if (stream && stream !== this.current) this.cancel(stream);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** A new stream with the current filter; once acknowledged it replaces the current one. */
  private open(afterDrop: boolean): {
    stream?: Stream;
    honoured: Promise<SubscriptionFilter | undefined>;
  } {
    clearTimeout(this.timer);
    const filter = this.filter();
    if (this.closed || !filter) {
      this.replace(undefined);
      return { honoured: Promise.resolve(undefined) };
    }
    const id = `tp:listen:${++this.seq}`;
    const controller = new AbortController();
    let ack!: (f: SubscriptionFilter) => void;
    let fail!: (err: unknown) => void;
    const acked = new Promise<SubscriptionFilter>((resolve, reject) => {
      ack = resolve;
      fail = reject;
    });
    acked.catch(() => {});
    const stream: Stream = { id, controller, acked, ack, fail };
    this.streams.set(id, stream);
    this.latest = stream;
    this.deps
      .open(id, filter, controller.signal, (n) => this.receive(n, id))
      .then(
        () => this.ended(stream, undefined),
        (err: unknown) => this.ended(stream, err),
      );
    const honoured = acked.then((honoured) => {
      if (controller.signal.aborted) return honoured;
      this.replace(stream);
      this.failures = 0;
      if (afterDrop) this.deps.onListChanged();
      return honoured;
    });
    return { stream, honoured };
  }

  private replace(stream: Stream | undefined): void {
    const old = this.current;
    this.current = stream;
    if (old && old !== stream) this.cancel(old);
  }

  private cancel(stream: Stream): void {
    this.streams.delete(stream.id);
    stream.controller.abort(new Error("listen replaced"));
  }

  /**
   * A notification of one of our streams (`tie`: the listen request whose HTTP answer carried it; on stdio the
   * stream is named in `_meta`). False when it belongs to no stream of ours.
   */
  receive(n: Note, tie?: string): boolean {
    const meta = isRecord(n.params?._meta) ? n.params._meta : undefined;
    const named = meta?.[META_KEYS.subscriptionId];
    const teardown = n.method === "notifications/cancelled" ? n.params?.requestId : undefined;
    const id =
      tie ?? (typeof named === "string" ? named : typeof teardown === "string" ? teardown : undefined);
    const stream = id === undefined ? undefined : this.streams.get(id);
    if (!stream) return false;
    if (n.method === "notifications/subscriptions/acknowledged") {
      const honoured = n.params?.notifications;
      stream.ack(isRecord(honoured) ? (honoured as SubscriptionFilter) : {});
    } else if (teardown !== undefined) {
      // stdio: the upstream tore the stream down.
      this.ended(stream, undefined);
    } else if (stream === this.current) {
      const { _meta: _m, ...rest } = n.params ?? {};
      const { [META_KEYS.subscriptionId]: _s, ...others } = meta ?? {};
      const params = Object.keys(others).length ? { ...rest, _meta: others } : rest;
      if (/^notifications\/(tools|prompts|resources)\/list_changed$/.test(n.method))
        this.deps.onListChanged();
      this.deps.onNotification({ method: n.method, params });
    }
    return true;
  }

  /** A stream ended (gracefully, broken, refused, or cancelled by us). */
  private ended(stream: Stream, err: unknown): void {
    const ours = this.streams.delete(stream.id);
    stream.fail(err ?? new Error("subscriptions/listen ended before it was acknowledged"));
    if (this.closed || stream.controller.signal.aborted || !ours) return;
    // Only the stream in charge is opened again: the current one, or the first one while none is current yet.
    if (stream !== this.current && (this.current || stream !== this.latest)) return;
    this.current = undefined;
    const code = (err as { code?: unknown } | undefined)?.code;
    if (typeof code === "number" && !TRANSPORT_CODES.has(code)) {
      this.deps.onRefused(`subscriptions/listen refused: ${(err as Error).message}`);
      return;
    }
    const delay = Math.min(
      MAX_DELAY_MS,
      (this.deps.reopenDelayMs ?? 1000) * 2 ** Math.min(this.failures++, 8),
    );
    this.timer = setTimeout(() => void this.open(true).honoured.catch(() => {}), delay);
    this.timer.unref();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    for (const s of this.streams.values()) s.controller.abort(new Error("closed"));
    this.streams.clear();
    this.current = undefined;
  }
}
