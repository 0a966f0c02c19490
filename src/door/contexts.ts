/**
 * @module 2026-07-28 requests at the door. No session: each request carries its client in `_meta` and its
 * selection in the URL. Requests with the same selection, credential values and identity are served by one
 * context (a session without a transport: its resolution, instances and captured values), kept while used and
 * closed when idle; a per-session upstream of a caller with no credentials gets a session of one request. A retry
 * that names a call parked on this replica is served where that call runs.
 */
import { randomUUID } from "node:crypto";
import { accessKey } from "../access.js";
import { requestDigest } from "../modern/request-state.js";
import { profileKey } from "../proxy/client-profiles.js";
import type { Gateway } from "../proxy/gateway.js";
import { BEARER_OWNER } from "../proxy/handles.js";
import type { Session } from "../proxy/session.js";
import { errors, WireError } from "../wire/errors.js";
import type { Admission } from "./admission.js";
import { type Caller, instancesOf } from "./caller.js";
import { sessionDigest } from "./digest.js";

type Request = { readonly method: string; readonly params?: Record<string, unknown> };

/** A session a 2026-07-28 request is served by, and what to call once it has been answered. */
export interface Served {
  readonly session: Session;
  /** The key per-client limits count this request under (its caller's: a context may serve several clients). */
  readonly client: string;
  done(): void;
}

export class Contexts {
  private readonly opening = new Map<string, Promise<Session | WireError>>();
  private readonly sweep: NodeJS.Timeout;

  constructor(
    private readonly gateway: Gateway,
    private readonly admission: Admission<Session>,
    private readonly idleMs: number,
  ) {
    this.sweep = setInterval(() => this.expire(), Math.min(idleMs, 60_000));
    this.sweep.unref();
  }

  /** The session that serves this request of `caller`, or the refusal. */
  async serve(caller: Caller, m: Request): Promise<Served | WireError> {
    const parked = this.parked(caller, m);
    if (parked instanceof WireError) return parked;
    const session = parked ?? (await this.context(caller));
    if (session instanceof WireError) return session;
    const busy = this.admission.enter(session, 1);
    if (busy) {
      this.release(session);
      return busy;
    }
    // A listen stream is held until the client closes it: it counts against its client across all contexts.
    const listening = m.method === "subscriptions/listen" ? this.admission.listen(caller.client) : undefined;
    if (listening instanceof WireError) {
      this.release(session);
      return listening;
    }
    session.exchangeStarted();
    return {
      session,
      client: caller.client,
      done: () => {
        listening?.();
        session.exchangeEnded();
        session.lastSeen = this.gateway.now();
        this.release(session);
      },
    };
  }

  /**
   * A retry (its request carries a requestState): one that names a call parked on this replica is served by the
   * session that runs that call, whichever context its selection and credentials would give today. One whose
   * state does not open for this caller and request, or names no call parked here (it expired, was used, or was
   * made on another replica), is refused at once: nothing is started for it. A pass-through state (a 2026-07-28
   * upstream's, wrapped) goes the ordinary way.
   */
  private parked(caller: Caller, m: Request): Session | WireError | undefined {
    const token = m.params?.requestState;
    if (token === undefined) return undefined;
    const opened =
      typeof token === "string"
        ? this.gateway.requestStates.open(token, {
            owner: caller.owner,
            request: requestDigest(m.method, m.params),
          })
        : undefined;
    if (opened?.ok && opened.state.inner !== undefined) return undefined;
    const holder = opened?.ok ? this.gateway.bridges.get(opened.state.bridge)?.holder : undefined;
    const session = holder as Session | undefined;
    if (!session || !this.gateway.sessions.has(session)) {
      this.gateway.logger.debug("requestState refused", {
        why: opened?.ok ? "no such call parked here" : (opened?.reason ?? "not a string"),
      });
      return errors.requestState();
    }
    return session;
  }

  /** The context of the caller's selection, credential values and identity (made on first use). */
  private async context(caller: Caller): Promise<Session | WireError> {
    const catalog = this.gateway.catalog;
    const anonymous = Object.keys(caller.credentials.values).length === 0;
    const oneRequest =
      anonymous && caller.upstreams.some((u) => catalog.upstreams.get(u)?.isolation === "per-session");
    if (oneRequest) return this.open(caller, randomUUID(), "request");
    const key = `2026-07-28\u0000${accessKey(caller.selection)}\u0000${caller.owner}\u0000${profileKey(caller.selection)}`;
    const known = this.gateway.sessions.get(key);
    if (known) {
      this.gateway.sessions.touch(known);
      return known;
    }
    let p = this.opening.get(key);
    if (!p) {
      p = this.open(caller, key, "context").finally(() => this.opening.delete(key));
      this.opening.set(key, p);
    }
    return p;
  }

  private async open(caller: Caller, id: string, kind: "context" | "request"): Promise<Session | WireError> {
    const ticket =
      kind === "context"
        ? await this.admission.admit("context", caller.client)
        : this.admission.headroom(caller.client);
    if (ticket instanceof WireError) return ticket;
    // Captured values belong to the credential values and identity (any selection, any replica); callers with
    // neither get bearer handles (SPEC §8.5).
    const stateOwner = caller.bearer ? BEARER_OWNER : this.gateway.handles.credentialOwner(caller.owner);
    try {
      const refs = instancesOf(this.gateway.catalog, caller, id);
      const slots = await this.admission.instances(refs, caller.client);
      if (slots instanceof WireError) {
        ticket?.release();
        return slots;
      }
      const session = await this.gateway
        .open({
          id,
          kind,
          client: caller.client,
          selection: caller.selection,
          refs,
          credentials: caller.credentials,
          binding: caller.binding,
          identity: caller.identity,
          principal: caller.principal,
          digest: sessionDigest(id),
          owner: caller.owner,
          stateOwner,
        })
        .finally(slots);
      ticket?.bind();
      return session;
    } catch (err) {
      ticket?.release();
      if (err instanceof WireError) return err;
      throw err;
    }
  }

  /** A session of one request goes once no request runs on it and no bridge parks a call on its instances. */
  private release(s: Session): void {
    if (s.kind !== "request" || s.busy > 0 || this.gateway.bridges.holds(s)) return;
    void this.gateway.closeSession(s);
  }

  private expire(): void {
    const cutoff = this.gateway.now() - this.idleMs;
    for (const s of [...this.gateway.sessions.values()]) {
      if (s.kind !== "context" || s.busy > 0 || s.holding || s.lastSeen >= cutoff) continue;
      void this.gateway.closeSession(s);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweep);
    const mine = [...this.gateway.sessions.values()].filter((s) => s.kind !== "session");
    await Promise.all(mine.map((s) => this.gateway.closeSession(s)));
  }
}
