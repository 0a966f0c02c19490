/**
 * @module A request's cancellation, as cheap as a flag until something needs a Web `AbortSignal`. On Node 20 an
 * `AbortSignal` is an `EventTarget`: making one per request, adding a listener and removing it again cost about
 * 25 µs of CPU per forwarded call in the bench (its garbage included), a tenth of the proxy's whole cost, for
 * calls that are almost never cancelled. The core takes any `Signal` (a real `AbortSignal` is one); what a
 * request is served with is a `Cancellation`. Nothing a `Signal` reaches needs a Web signal: `fetch` upstream is
 * given the connection's own `AbortSignal`.
 */

/** What the core reads of a cancellation: the part of `AbortSignal` it uses (a real `AbortSignal` is one). */
export interface Signal {
  readonly aborted: boolean;
  readonly reason: unknown;
  throwIfAborted(): void;
  addEventListener(type: "abort", listener: () => void, options?: { readonly once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

/** A cancellation that can be aborted once; its listeners run once, in the order they were added. */
export class Cancellation implements Signal {
  private why: unknown;
  private ended = false;
  private listeners: (() => void)[] | undefined;

  get aborted(): boolean {
    return this.ended;
  }

  get reason(): unknown {
    return this.why;
  }

  throwIfAborted(): void {
    if (this.ended) throw this.why;
  }

  /** Aborts it (once: later calls do nothing). Without a reason, an `AbortError` as `AbortController` makes. */
  abort(reason?: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.why = reason === undefined ? new DOMException("This operation was aborted", "AbortError") : reason;
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners) for (const listener of listeners) listener();
  }

  /** Listeners run at most once (whatever `once` says); one added after the abort never runs, as with a Web signal. */
  addEventListener(_type: "abort", listener: () => void, _options?: { readonly once?: boolean }): void {
    if (this.ended) return;
    if (this.listeners) this.listeners.push(listener);
    else this.listeners = [listener];
  }

  removeEventListener(_type: "abort", listener: () => void): void {
    const listeners = this.listeners;
    if (!listeners) return;
    const i = listeners.indexOf(listener);
    if (i >= 0) listeners.splice(i, 1);
  }
}
