/**
 * @module A 2025 upstream's call held open for a 2026-07-28 client (bridge B3). The client cannot be sent a
 * server→client request; so what the upstream asks during the call (sampling, elicitation, roots) is
 * answered to the client as an `input_required` result, the upstream call stays parked, and the client's
 * retry (with `inputResponses` and the signed `requestState`) answers the waiting requests and waits for what
 * comes next: the result, or another round.
 */

import { randomBytes } from "node:crypto";
import { errors } from "../wire/errors.js";
import { Cancellation, type Signal } from "../wire/signal.js";
import type { Params } from "./peer.js";

/** A client request attached to a bridge (a Call, seen from here): it gets the call's notifications. */
export interface Attached {
  notify(n: { method: string; params?: Params }): void;
}

type Asked = { method: string; params?: Params };

interface Waiting {
  readonly request: Asked;
  readonly resolve: (result: Params) => void;
  readonly reject: (err: Error) => void;
  /** Sent to the client in an input_required round already. */
  sent: boolean;
}

/** A parked bridge, as the table holds it. */
export interface Parked {
  readonly id: string;
  readonly upstream: string;
  /** The session (or 2026-07-28 context) whose instance runs the parked call: its retry is served there. */
  readonly holder: object;
  /** The client whose retry it waits for: parked calls count against it (SPEC §7.6). */
  readonly client: string;
  cancel(reason: string): void;
}

export type Step = { readonly done: Params } | { readonly ask: Readonly<Record<string, Asked>> };

export class Bridge<C extends Attached = Attached> implements Parked {
  private key: string | undefined;
  /** The bridge id: unguessable (128 bits), made when first needed (a call that never asks needs none). */
  get id(): string {
    this.key ??= randomBytes(16).toString("base64url");
    return this.key;
  }
  /** Aborts the parked upstream call (its requests fail, the upstream is told). */
  readonly cancellation = new Cancellation();
  private readonly waiting = new Map<string, Waiting>();
  private seq = 0;
  private outcome: { ok: true; result: Params } | { ok: false; error: unknown } | undefined;
  private wake: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** The client request now attached: it gets the call's progress and log lines. */
  private current: C | undefined;
  /** The latest client request attached (kept while parked): whose capabilities the upstream may use. */
  private last: C | undefined;
  /** The progress token of the request attached now. */
  private token: unknown;

  constructor(
    readonly upstream: string,
    readonly holder: object,
    readonly client: string,
    /** How long a parked round waits for the client's retry before the upstream's requests fail. */
    private readonly timeoutMs: number,
    private readonly onEnd: (bridge: Parked) => void,
    private readonly onExpire: (bridge: Parked) => void = () => {},
  ) {}

  /** The upstream call this bridge holds. */
  hold(call: Promise<Params>): void {
    call.then(
      (result) => this.finish({ ok: true, result }),
      (error: unknown) => this.finish({ ok: false, error }),
    );
  }

  private finish(outcome: NonNullable<Bridge["outcome"]>): void {
    this.outcome ??= outcome;
    for (const w of this.waiting.values()) w.reject(errors.callEnded());
    this.waiting.clear();
    this.wake?.();
  }

  /** A request the upstream asks during the call: held until a retry answers it (or the round expires). */
  ask(request: Asked, signal: Signal): Promise<Params> {
    const key = `r${++this.seq}`;
    return new Promise<Params>((resolve, reject) => {
      this.waiting.set(key, { request, resolve, reject, sent: false });
      signal.addEventListener(
        "abort",
        () => {
          if (this.waiting.delete(key)) reject(errors.cancelledByUpstream());
        },
        { once: true },
      );
      this.wake?.();
    });
  }

  /** A notification of the call (a log line, …): to the client request attached now, if any. */
  notify(n: { method: string; params?: Params }): void {
    this.current?.notify(n);
  }

  /** The call's progress, under the progress token of the client request attached now. */
  progress(p: Params): void {
    if (this.token !== undefined)
      this.current?.notify({ method: "notifications/progress", params: { ...p, progressToken: this.token } });
  }

  /** The client request attached now (undefined while parked). */
  get attached(): C | undefined {
    return this.current;
  }

  /** The latest client request attached, parked or not. */
  get latest(): C | undefined {
    return this.last;
  }

  /** Attaches a client request (the first, or a retry) with its progress token. */
  attach(call: C, token: unknown): void {
    clearTimeout(this.timer);
    this.current = call;
    this.last = call;
    this.token = token;
  }

  /**
   * Waits for the next step for the attached request: the call's result (or error), or the requests it is
   * waiting on (several asked together go out together; unanswered ones go out again).
   */
  async next(): Promise<Step> {
    for (;;) {
      if (this.outcome) {
        this.ended();
        if (this.outcome.ok) return { done: this.outcome.result };
        throw this.outcome.error;
      }
      const fresh = [...this.waiting].filter(([, w]) => !w.sent);
      const unanswered = [...this.waiting].filter(([, w]) => w.sent);
      if (fresh.length || unanswered.length) {
        // Requests asked in the same moment go out in one round.
        await new Promise((r) => setImmediate(r));
        const ask: Record<string, Asked> = {};
        for (const [key, w] of this.waiting) {
          w.sent = true;
          ask[key] = w.request;
        }
        if (Object.keys(ask).length) return { ask };
        continue;
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = undefined;
    }
  }

  /** A retry's `inputResponses`: each answers the waiting request of its key; others are ignored. */
  answer(responses: unknown): void {
    if (!responses || typeof responses !== "object") return;
    for (const [key, value] of Object.entries(responses as Record<string, unknown>)) {
      const w = this.waiting.get(key);
      if (!w || !value || typeof value !== "object") continue;
      this.waiting.delete(key);
      w.resolve(value as Params);
    }
  }

  /** The round went out: wait for the retry at most `timeoutMs`, then fail what the upstream waits on. */
  park(): void {
    this.current = undefined;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.onExpire(this);
      this.cancel("the client did not retry within input_timeout");
    }, this.timeoutMs);
    this.timer.unref();
  }

  /** Ends the call with `error` for the client (and cancels it upstream): it needs what the client cannot do. */
  fail(error: Error): void {
    this.finish({ ok: false, error });
    this.cancellation.abort(error);
  }

  /** Ends the bridge: the waiting requests fail, the upstream call is cancelled. */
  cancel(reason: string): void {
    clearTimeout(this.timer);
    for (const w of this.waiting.values()) w.reject(errors.bridgeEnded(reason));
    this.waiting.clear();
    this.cancellation.abort(errors.bridgeEnded(reason));
    this.ended();
  }

  /** Tells the table the bridge ended; one that never parked has no id and was never in a table. */
  private ended(): void {
    if (this.key !== undefined) this.onEnd(this);
  }
}

/**
 * The bridges parked on this replica, by id, counted by holder and by client. Bounded: a round that would park a
 * call past `refusal` ends with that error (and the upstream call is cancelled).
 */
export class BridgeTable {
  private readonly bridges = new Map<string, Parked>();
  private readonly held = new Map<object, number>();
  private readonly byClient = new Map<string, number>();
  /**
   * Why a call of `client` may not park now (undefined: it may). The door sets it to the limits in force
   * (`limits.parked_calls`, `parked_calls_per_client`); until then only `max` in total.
   */
  refusal: (client: string) => Error | undefined = () =>
    this.bridges.size >= this.max ? errors.parkedCalls(this.max, false) : undefined;

  constructor(
    readonly max = 1024,
    /** Called when a holder's last parked bridge leaves the table. */
    private readonly onRelease: (holder: object) => void = () => {},
  ) {}

  /** Parked calls of one client (of every client, without one). */
  count(client?: string): number {
    return client === undefined ? this.bridges.size : (this.byClient.get(client) ?? 0);
  }

  /** Whether a parked bridge runs on this holder's instances. */
  holds(holder: object): boolean {
    return (this.held.get(holder) ?? 0) > 0;
  }

  get size(): number {
    return this.bridges.size;
  }

  add(bridge: Parked): void {
    if (this.bridges.has(bridge.id)) return;
    this.bridges.set(bridge.id, bridge);
    this.held.set(bridge.holder, (this.held.get(bridge.holder) ?? 0) + 1);
    this.byClient.set(bridge.client, (this.byClient.get(bridge.client) ?? 0) + 1);
  }

  get(id: string): Parked | undefined {
    return this.bridges.get(id);
  }

  delete(bridge: Parked): void {
    if (this.bridges.get(bridge.id) !== bridge) return;
    this.bridges.delete(bridge.id);
    const c = (this.byClient.get(bridge.client) ?? 1) - 1;
    if (c > 0) this.byClient.set(bridge.client, c);
    else this.byClient.delete(bridge.client);
    const n = (this.held.get(bridge.holder) ?? 1) - 1;
    if (n > 0) this.held.set(bridge.holder, n);
    else {
      this.held.delete(bridge.holder);
      this.onRelease(bridge.holder);
    }
  }

  close(): void {
    for (const b of [...this.bridges.values()]) b.cancel("toolpacks is shutting down");
    this.bridges.clear();
    this.held.clear();
    this.byClient.clear();
  }
}
