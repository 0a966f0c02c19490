/**
 * @module One client session: every message of one client, over any transport (HTTP, stdio, in memory),
 * through one path. Requests are answered from the session's resolution or relayed by route; notifications
 * cancel, announce, or are forwarded to this session's own instances; responses answer our own requests.
 */

import type {
  ClientCapabilities,
  JSONRPCMessage,
  MessageExtraInfo,
  RequestId,
  ServerCapabilities,
} from "@modelcontextprotocol/sdk/types.js";
import type { Principal } from "../auth/types.js";
import type { AnswerFacts } from "../codec/codec.js";
import { legacyClientOf } from "../codec/legacy.js";
import { modernClientOf } from "../codec/modern.js";
import type { Resolution } from "../resolve.js";
import type { Selection } from "../selection.js";
import type { InstanceRef } from "../upstream/instance.js";
import { sharedRef } from "../upstream/instance.js";
import { errors } from "../wire/errors.js";
import { type Id, type Notification, RpcPeer, SENT } from "../wire/peer.js";
import type { Signal } from "../wire/signal.js";
import { askClient } from "./ask.js";
import { CallsByUpstream } from "./calls.js";
import { ownerOfValues } from "./handles.js";
import type { Params, SessionHost, UpstreamLink } from "./host.js";
import { type Credentials, dependsOnCaller } from "./instances.js";
import { capabilitiesOf, initializeResult } from "./legacy.js";
import { Listeners } from "./listen.js";
import { type Dispatched, handle, lists } from "./methods.js";
import type { LogLevel } from "./peer.js";
import type { SessionKind } from "./registry.js";
import { serverSpanOf, type TraceHeaders } from "./spans.js";
import type { Call, CallClient } from "./state.js";
import type { Reply, SessionTransport } from "./transport.js";

export interface SessionInit {
  /** Its key in the registry (a session id, a context key, a random one): never logged. */
  readonly id: string;
  readonly kind: SessionKind;
  /** Who opened it, as per-client limits count. */
  readonly client: string;
  readonly selection: Selection;
  readonly resolution: Resolution;
  /** The instance of every upstream the selection names. */
  readonly refs: ReadonlyMap<string, InstanceRef>;
  /** A digest of the session id, for logs. */
  readonly digest: string;
  /** What per-session instance refs are made from (unguessable; never logged). */
  readonly sessionKey: string;
  /** The credential headers it was opened with: a reload places it again by them. In memory only. */
  readonly credentials: Credentials;
  /** Their digest: a request must carry the same to be served (the door checks). */
  readonly binding: string;
  /** Who opened it (`identityKey`), when anyone: a request must be the same. */
  readonly identity: string | undefined;
  /** It serves one request only (stateless): never findable by an id. */
  readonly oneRequest?: boolean;
  readonly principal?: Principal | undefined; // who opened it (SessionState.principal); never a token
  readonly owner?: string; // what its 2026-07-28 request states are bound to: a digest, never a credential
  readonly stateOwner?: string | null; // whose captured values (default: sessionKey's digest; null: none, §8.5)
  /**
   * Run before the client's first initialize is answered (stdio: the session opened before the client said who
   * it is, so the door fits it to the client's profile then, SPEC §14.5).
   */
  readonly initializing?: (params: Params) => Promise<void>;
}

/** How long the client may take to answer a request of ours (sampling, elicitation, roots). */
const CLIENT_TIMEOUT_MS = 10 * 60_000;
/** Requests one session may have waiting for its client's answer; more are refused to the upstream at once. */
export const MAX_WAITING = 100;
/** A listen stream ends with its result, even when the client cancelled it (stdio). */
const ANSWERED_WHEN_CANCELLED: ReadonlySet<string> = new Set(["subscriptions/listen"]);

export class Session implements Dispatched {
  readonly id: string;
  readonly kind: SessionKind;
  readonly client: string;
  lastSeen: number;
  logLevel: LogLevel = "debug";
  readonly stateOwner: string | undefined;
  readonly digest: string;
  readonly sessionKey: string;
  readonly credentials: Credentials;
  readonly binding: string;
  readonly identity: string | undefined;
  readonly oneRequest: boolean;
  readonly principal: Principal | undefined;
  readonly owner: string;
  clientCapabilities: ClientCapabilities | undefined;
  clientInfo: { name: string; version: string } | undefined;
  protocolVersion: string | undefined;
  private caps: ServerCapabilities;
  readonly listeners: Listeners;
  private chosen: Selection;
  private current: Resolution;
  private initializing: ((params: Params) => Promise<void>) | undefined;
  /** What `initializing` is doing, while it does it: the session's other requests wait for it. */
  private fitting: Promise<void> | undefined;
  private currentRefs: ReadonlyMap<string, InstanceRef>;
  private transport: SessionTransport | undefined;
  /** The conversation with the client over its transport: its requests, our requests, cancellations. */
  private readonly peer: RpcPeer;
  /** Requests served on an exchange of their own (2026-07-28 over HTTP), not by the peer. */
  private exchanges = 0;
  /** This session's calls in flight per upstream: its own instances' untied messages ride on the latest. */
  private readonly calls = new CallsByUpstream<Call>();
  private closed = false;

  constructor(
    readonly host: SessionHost,
    init: SessionInit,
  ) {
    this.id = init.id;
    this.kind = init.kind;
    this.client = init.client;
    this.chosen = init.selection;
    this.current = init.resolution;
    this.initializing = init.initializing;
    this.currentRefs = init.refs;
    this.digest = init.digest;
    this.sessionKey = init.sessionKey;
    this.credentials = init.credentials;
    this.binding = init.binding;
    this.identity = init.identity;
    this.oneRequest = init.oneRequest === true;
    this.principal = init.principal;
    this.owner = init.owner ?? init.digest;
    this.lastSeen = host.now();
    this.stateOwner = ownerOfValues(init.stateOwner, init.sessionKey);
    this.caps = this.capabilitiesNow();
    this.listeners = new Listeners(this);
    this.peer = new RpcPeer((m, related) => this.send(m as JSONRPCMessage, related), {
      request: (r, signal, id, extra) =>
        this.fromClient(r, signal, id, extra as MessageExtraInfo | undefined),
      notification: (n) => this.notification(n.method, n.params ?? {}),
      abandoned: (id) => this.transport?.abandon?.(id),
      answersWhenCancelled: ANSWERED_WHEN_CANCELLED,
    });
  }

  /** Requests of this client being answered now (none: closing it interrupts nothing). */
  get busy(): number {
    return this.peer.busy + this.exchanges;
  }

  /** Something of it is open that closing it would cut: its GET stream, a listen stream, a parked call. */
  get holding(): boolean {
    return (this.transport?.holding ?? false) || this.pinned;
  }

  /**
   * What a client waits on beyond a request of its own: a listen stream or a parked call. Its instance keeps its
   * slot for it (a GET stream alone does not: every client holds one, and a slot would then never free up).
   */
  get pinned(): boolean {
    return this.listeners.open > 0 || this.host.bridges.holds(this);
  }

  /** Whether a request of the client with this id is still being answered (an id may not be reused meanwhile). */
  inUse(id: RequestId): boolean {
    return this.peer.serving(id);
  }

  /** The transport it speaks through, if any (a 2026-07-28 context has none). */
  get via(): SessionTransport | undefined {
    return this.transport;
  }

  /** The answers of this session may depend on who asks. */
  get private(): boolean {
    return (
      dependsOnCaller(this.credentials, this.currentRefs) ||
      this.principal !== undefined ||
      this.selection.gated === true
    );
  }

  /** What it advertises: what the upstreams of its resolution do. */
  get capabilities(): ServerCapabilities {
    return this.caps;
  }

  private capabilitiesNow(): ServerCapabilities {
    return capabilitiesOf(this.current.upstreams.map((u) => this.link(u).capabilities ?? {}));
  }

  get selection(): Selection {
    return this.chosen;
  }

  get resolution(): Resolution {
    return this.current;
  }

  get refs(): ReadonlyMap<string, InstanceRef> {
    return this.currentRefs;
  }

  ref(upstream: string): InstanceRef {
    return this.currentRefs.get(upstream) ?? sharedRef(upstream);
  }

  link(upstream: string): UpstreamLink {
    return this.host.link(this.ref(upstream));
  }

  /** Takes the transport's messages from now on. */
  async connect(transport: SessionTransport): Promise<void> {
    this.transport = transport;
    transport.onmessage = (message, extra) => this.receive(message, extra);
    transport.onclose = () => void this.host.closeSession(this);
    await transport.start?.();
  }

  /** One message from the client (its transport's `extra` carries an HTTP request's headers). */
  receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    this.lastSeen = this.host.now();
    this.peer.receive(message as never, undefined, extra);
  }

  /** A request of the client's conversation: of the 2025 era, or carrying the 2026-07-28 envelope (stdio). */
  private fromClient(r: Notification, signal: Signal, id: Id, extra?: MessageExtraInfo): Promise<Params> {
    const headers = extra?.requestInfo?.headers as TraceHeaders | undefined;
    const requestId = typeof headers?.["x-request-id"] === "string" ? headers["x-request-id"] : undefined;
    // Era branch 1 of 3 (docs/architecture.md): which codec reads a request of a conversation that may carry
    // either era (stdio, in memory): one with the 2026-07-28 envelope is of that era, whatever came before.
    const client = modernClientOf(r.params) ?? this.legacyClient;
    const m = { id, method: r.method, params: r.params };
    return this.answerFor(
      m,
      client,
      signal,
      (n) => void this.send(n, id).catch(() => {}),
      requestId,
      headers,
    );
  }

  /** What its answers' caching hints are made from, read only by a codec that makes them (2026-07-28). */
  private readonly facts: AnswerFacts = ((session: Session) => ({
    get private() {
      return session.private;
    },
    get serverInfo() {
      return session.host.serverInfo;
    },
    get cacheTtlMs() {
      return session.host.cacheTtlMs;
    },
  }))(this);

  /** The client of a 2025 request: the session's initialize and its current log level. */
  private readonly legacyClient: CallClient = legacyClientOf(this);

  /**
   * Answers one request that came on an exchange of its own (a 2026-07-28 POST): relayed or answered here, its
   * related messages and its answer through `reply`, cancelled when `signal` aborts (the client closed it).
   */
  async run(
    m: { id: RequestId; method: string; params?: Params },
    client: CallClient,
    reply: Reply,
    requestId: string | undefined,
    signal: Signal,
    headers?: TraceHeaders,
  ): Promise<void> {
    const { id } = m;
    let answer: JSONRPCMessage;
    const notify = (n: JSONRPCMessage) => {
      if (!signal.aborted) void reply.send(n).catch(() => {});
    };
    try {
      const result = await this.answerFor(m, client, signal, notify, requestId, headers);
      answer = { jsonrpc: "2.0", id, result } as JSONRPCMessage;
    } catch (err) {
      const e = err as { code?: unknown; message?: string; data?: unknown };
      const code = Number.isSafeInteger(e?.code) ? (e.code as number) : -32603;
      const data = e?.data !== undefined ? { data: e.data } : {};
      answer = { jsonrpc: "2.0", id, error: { code, message: e?.message ?? "Internal error", ...data } };
    }
    // A cancelled request gets no answer (but a listen stream is closed with its result where it still can be).
    if (signal.aborted && !ANSWERED_WHEN_CANCELLED.has(m.method)) reply.abandon();
    else await reply.send(answer).catch(() => {});
  }

  /** The result of one request (or throws its error), with its span; `notify` carries what belongs to it. */
  private async answerFor(
    m: { id: RequestId; method: string; params?: Params },
    client: CallClient,
    signal: Signal,
    notify: (n: JSONRPCMessage) => void,
    requestId: string | undefined,
    headers: TraceHeaders | undefined,
  ): Promise<Params> {
    const { id } = m;
    const codec = client.codec;
    const span = serverSpanOf(this, m, client.protocolVersion, headers);
    // One shape for every call (what does not apply is undefined): the pipeline's reads of it stay monomorphic.
    const call: Call = {
      id,
      client,
      signal,
      span,
      requestId,
      sentParams: undefined,
      notify: (n) => {
        if (!signal.aborted) notify({ jsonrpc: "2.0", ...n } as JSONRPCMessage);
      },
      ask: codec.askable ? (r, s) => this.askClient(r, s, id) : () => Promise.reject(errors.notAskable()),
    };
    try {
      if (this.fitting && m.method !== "initialize") await this.fitting;
      const params = m.params ?? {};
      codec.accept(m.method);
      const result = codec.result(m.method, params, await handle(this, m.method, params, call), this.facts);
      span.end({ result });
      return result;
    } catch (err) {
      span.end({ error: err });
      throw codec.error(err);
    }
  }

  /** A request of ours to the client (sampling, elicitation, roots), on the stream of `related` when given. */
  private askClient(request: { method: string; params?: Params }, signal: Signal, related?: Id) {
    if (this.peer.waiting >= MAX_WAITING)
      return Promise.reject(errors.clientWaiting(MAX_WAITING, request.method));
    return this.peer
      .request(request.method, request.params ?? {}, {
        signal,
        timeoutMs: CLIENT_TIMEOUT_MS,
        related,
        gaveUp: (why, reason) =>
          errors.clientDidNotAnswer(
            request.method,
            why === "timeout" ? `timed out after ${CLIENT_TIMEOUT_MS} ms` : String(reason),
          ),
      })
      .catch((err: unknown) => {
        // A send that failed is not the client's answer: said as it is.
        if ((err as { code?: unknown }).code === undefined) throw errors.internal((err as Error).message);
        throw err;
      });
  }

  /**
   * Puts the session in the state its client's initialize left it in, without a client: a session rebuilt on
   * another replica from its signed id, each stateless request.
   */
  replay(params: Params): void {
    this.handshake(params);
  }

  /** A request on an exchange of its own began or ended (the door counts it as in flight). */
  exchangeStarted(): void {
    this.exchanges++;
  }

  exchangeEnded(): void {
    this.exchanges--;
  }

  /** The definition of a tool this session routes (for a transport's own checks of its arguments). */
  toolDefinition(name: string): { readonly inputSchema?: unknown } | undefined {
    return this.current.tool.get(name)?.definition;
  }

  /** The client's initialize: answered, and the session takes what it declared; one that fails ends it. */
  initialize(params: Params): Params | Promise<Params> {
    const before = this.initializing;
    if (!before) return this.initialized(params);
    this.initializing = undefined;
    // Requests the client sends before the answer (pipelined) wait for it too: none is served unfitted.
    this.fitting = before(params).catch(() => {});
    return this.fitting.then(() => this.initialized(params));
  }

  private initialized(params: Params): Params {
    try {
      return this.handshake(params);
    } catch (err) {
      // A session whose initialize failed must not live on: it ends once the error is answered.
      this.host.logger.warn("initialize failed; session closed", { session: this.digest });
      setImmediate(() => void this.host.closeSession(this));
      throw err;
    }
  }

  private handshake(params: Params): Params {
    const init = initializeResult(params, this.capabilities, this.host.serverInfo, this.current.instructions);
    this.protocolVersion = init.protocolVersion;
    this.clientCapabilities = init.clientCapabilities;
    this.clientInfo = init.clientInfo;
    return init.result;
  }

  private notification(method: string, _params: Params): void {
    // Only this session's own instances ever asked this client for its roots.
    if (method !== "notifications/roots/list_changed") return;
    const own = this.current.upstreams.filter((u) => this.link(u).owned);
    for (const u of own)
      void this.link(u)
        .notify({ method })
        .catch(() => {});
  }

  /** Sends one message; one tied to a request rides on that request's stream. */
  private send(message: JSONRPCMessage, relatedRequestId?: RequestId): Promise<void> {
    if (this.closed || !this.transport) return SENT;
    try {
      return this.transport.send(message, relatedRequestId !== undefined ? { relatedRequestId } : undefined);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  track(upstream: string, call: Call): () => void {
    return this.calls.track(upstream, call);
  }

  /** Peer: a notification not tied to a request (list changes, resource updates, a per-session instance's logs). */
  notify(notification: { method: string; params?: Params }, upstream?: string): void {
    const call = upstream ? this.calls.latest(upstream) : undefined;
    if (call) call.notify(notification);
    else void this.send({ jsonrpc: "2.0", ...notification } as JSONRPCMessage).catch(() => {});
  }

  /** Peer: a server→client request of an instance that is tied to no call (a per-session instance's). */
  ask(request: { method: string; params?: Params }, signal: Signal, upstream: string): Promise<Params> {
    // On the stream of this session's latest call to that upstream when there is one: it is this client's.
    return askClient(this, request, signal, upstream, this.calls.latest(upstream));
  }

  standalone(request: { method: string; params?: Params }, signal: Signal): Promise<Params> {
    return this.askClient(request, signal);
  }

  /**
   * Takes another selection with its resolution and instances before the client has seen any list (the door fits
   * a stdio session to its client's profile at initialize): nothing is announced.
   */
  refit(selection: Selection, resolution: Resolution, refs: ReadonlyMap<string, InstanceRef>): void {
    this.chosen = selection;
    this.current = resolution;
    this.currentRefs = refs;
    this.caps = this.capabilitiesNow();
  }

  /** Swaps in a new resolution (whole state); tells the client which of its lists changed. */
  update(next: Resolution, refs?: ReadonlyMap<string, InstanceRef>): void {
    const before = lists(this);
    this.current = next;
    if (refs) this.currentRefs = refs;
    const after = lists(this);
    const caps = this.capabilities;
    const changed = (a: unknown, b: unknown) => JSON.stringify(a) !== JSON.stringify(b);
    const announce = (kind: "tools" | "prompts" | "resources") => {
      this.notify({ method: `notifications/${kind}/list_changed` });
      this.listeners.changed(kind);
    };
    if (changed(before.tools, after.tools)) announce("tools");
    if (caps.prompts && changed(before.prompts, after.prompts)) announce("prompts");
    if (caps.resources && changed([before.resources, before.templates], [after.resources, after.templates])) {
      announce("resources");
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listeners.close();
    this.peer.close(errors.sessionClosed());
    const transport = this.transport;
    this.transport = undefined;
    await transport?.close().catch(() => {});
  }
}
