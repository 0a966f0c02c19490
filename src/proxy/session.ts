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
import { checkEnvelope, hasClaim } from "../modern/meta.js";
import type { Resolution } from "../resolve.js";
import type { Selection } from "../selection.js";
import type { InstanceRef } from "../upstream/instance.js";
import { sharedRef } from "../upstream/instance.js";
import { askClient } from "./ask.js";
import { CallsByUpstream } from "./calls.js";
import { legacyClientOf, modernClient } from "./clients.js";
import { rpcError } from "./errors.js";
import { HandleStore } from "./handles.js";
import type { Params, SessionHost, UpstreamLink } from "./host.js";
import { type Credentials, dependsOnCaller } from "./instances.js";
import { capabilitiesOf, initializeResult } from "./legacy.js";
import { Listeners } from "./listen.js";
import { handle, lists } from "./methods.js";
import { answerModern, type Reply, refusalMessage } from "./modern.js";
import { Outbound } from "./outbound.js";
import type { LogLevel } from "./peer.js";
import type { Call, CallClient, SessionState } from "./state.js";
import type { SessionTransport } from "./transport.js";

export interface SessionInit {
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
  /** Who owns what it keeps (handles, 2026-07-28 request states): a digest, never a credential. */
  readonly owner?: string;
}

type Message = {
  id?: RequestId;
  method?: string;
  params?: Params;
  result?: Params;
  error?: { code: number; message: string; data?: unknown };
};

export class Session implements SessionState {
  lastSeen: number;
  logLevel: LogLevel = "debug";
  readonly handles: HandleStore;
  readonly selection: Selection;
  readonly digest: string;
  readonly sessionKey: string;
  readonly credentials: Credentials;
  readonly owner: string;
  clientCapabilities: ClientCapabilities | undefined;
  clientInfo: { name: string; version: string } | undefined;
  protocolVersion: string | undefined;
  readonly capabilities: ServerCapabilities;
  readonly listeners: Listeners;
  private current: Resolution;
  private currentRefs: ReadonlyMap<string, InstanceRef>;
  private transport: SessionTransport | undefined;
  private readonly inflight = new Map<RequestId, AbortController>();
  /** This session's calls in flight per upstream: its own instances' untied messages ride on the latest. */
  private readonly calls = new CallsByUpstream<Call>();
  private readonly outbound = new Outbound((m, related) => this.send(m, related));
  private closed = false;

  constructor(
    readonly host: SessionHost,
    init: SessionInit,
  ) {
    this.selection = init.selection;
    this.current = init.resolution;
    this.currentRefs = init.refs;
    this.digest = init.digest;
    this.sessionKey = init.sessionKey;
    this.credentials = init.credentials;
    this.owner = init.owner ?? init.digest;
    this.lastSeen = host.now();
    this.handles = new HandleStore(host.stateMaxBytes);
    this.capabilities = capabilitiesOf(init.resolution.upstreams.map((u) => this.link(u).capabilities ?? {}));
    this.listeners = new Listeners(this);
  }

  /** The answers of this session may depend on who asks. */
  get private(): boolean {
    return dependsOnCaller(this.credentials, this.currentRefs);
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
    transport.onclose = () => void this.close();
    await transport.start?.();
  }

  /** One message from the client. */
  receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    this.lastSeen = this.host.now();
    const m = message as Message;
    if (m.method !== undefined && m.id !== undefined) {
      const rid = (extra?.requestInfo?.headers as Record<string, unknown> | undefined)?.["x-request-id"];
      const request = m as Message & { id: RequestId; method: string };
      const requestId = typeof rid === "string" ? rid : undefined;
      // A request that carries the 2026-07-28 envelope is of that era, whatever came before (stdio, in memory).
      if (hasClaim(request.params)) {
        const read = checkEnvelope(request.params);
        if (!read.ok) {
          void this.send(refusalMessage(request.id, read.refusal), request.id);
          return;
        }
        void this.run(request, modernClient(read.envelope), this.transportReply(request.id), requestId);
        return;
      }
      void this.run(request, this.legacyClient, this.transportReply(request.id), requestId);
    } else if (m.method !== undefined) this.notification(m.method, m.params ?? {});
    else if (m.id !== undefined) this.outbound.settle(m as Message & { id: RequestId });
  }

  /** The client of a 2025 request: the session's initialize and its current log level. */
  private readonly legacyClient: CallClient = legacyClientOf(this);

  private transportReply(id: RequestId): Reply {
    return {
      send: (message) => this.send(message, id),
      abandon: () => this.transport?.abandon?.(id),
    };
  }

  /**
   * Answers one request: relayed or answered here, its related messages and its answer through `reply`. With
   * `external`, the request is cancelled by that signal (an HTTP exchange closed by its client) rather than
   * by `notifications/cancelled` on this session.
   */
  async run(
    m: { id: RequestId; method: string; params?: Params },
    client: CallClient,
    reply: Reply,
    requestId?: string,
    external?: AbortSignal,
  ): Promise<void> {
    const { id } = m;
    const controller = new AbortController();
    if (external) {
      if (external.aborted) controller.abort(external.reason);
      else external.addEventListener("abort", () => controller.abort(external.reason), { once: true });
    } else this.inflight.set(id, controller);
    const modern = client.era === "2026-07-28";
    const call: Call = {
      id,
      client,
      signal: controller.signal,
      ...(requestId ? { requestId } : {}),
      notify: (n) => {
        if (!controller.signal.aborted)
          void reply.send({ jsonrpc: "2.0", ...n } as JSONRPCMessage).catch(() => {});
      },
      ask: modern
        ? () => Promise.reject(rpcError(-32603, "a 2026-07-28 request is not sent server→client requests"))
        : (r, signal) => this.outbound.request(r, signal, id),
    };
    let answer: JSONRPCMessage;
    try {
      const params = m.params ?? {};
      const result = modern
        ? await answerModern(this, m.method, params, call)
        : await this.answer(m.method, params, call);
      answer = { jsonrpc: "2.0", id, result } as JSONRPCMessage;
    } catch (err) {
      const e = err as { code?: unknown; message?: string; data?: unknown };
      const code = Number.isSafeInteger(e?.code) ? (e.code as number) : -32603;
      const data = e?.data !== undefined ? { data: e.data } : {};
      answer = { jsonrpc: "2.0", id, error: { code, message: e?.message ?? "Internal error", ...data } };
    } finally {
      if (this.inflight.get(id) === controller) this.inflight.delete(id);
    }
    // A cancelled request gets no answer (but a listen stream is closed with its result where it still can be).
    if (controller.signal.aborted && m.method !== "subscriptions/listen") reply.abandon();
    else await reply.send(answer).catch(() => {});
  }

  private answer(method: string, params: Params, call: Call): Promise<Params> | Params {
    if (method === "initialize") return this.initialize(params);
    if (method === "ping") return {};
    return handle(this, method, params, call);
  }

  private initialize(params: Params): Params {
    const init = initializeResult(params, this.capabilities, this.host.serverInfo, this.current.instructions);
    this.protocolVersion = init.protocolVersion;
    this.clientCapabilities = init.clientCapabilities;
    this.clientInfo = init.clientInfo;
    return init.result;
  }

  private notification(method: string, params: Params): void {
    if (method === "notifications/cancelled") {
      const id = params.requestId as RequestId | undefined;
      if (id !== undefined) this.inflight.get(id)?.abort(params.reason ?? "cancelled");
      return;
    }
    // Only this session's own instances ever asked this client for its roots.
    if (method !== "notifications/roots/list_changed") return;
    const own = this.current.upstreams.filter((u) => this.ref(u).kind === "session");
    for (const u of own)
      void this.link(u)
        .notify({ method })
        .catch(() => {});
  }

  /** Sends one message; one tied to a request rides on that request's stream. */
  private async send(message: JSONRPCMessage, relatedRequestId?: RequestId): Promise<void> {
    if (this.closed || !this.transport) return;
    await this.transport.send(message, relatedRequestId !== undefined ? { relatedRequestId } : undefined);
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
  ask(request: { method: string; params?: Params }, signal: AbortSignal, upstream: string): Promise<Params> {
    // On the stream of this session's latest call to that upstream when there is one: it is this client's.
    return askClient(this, request, signal, upstream, this.calls.latest(upstream));
  }

  standalone(request: { method: string; params?: Params }, signal: AbortSignal): Promise<Params> {
    return this.outbound.request(request, signal);
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
    for (const c of this.inflight.values()) c.abort("session closed");
    this.outbound.failAll("Session closed before the answer");
    const transport = this.transport;
    this.transport = undefined;
    await transport?.close().catch(() => {});
  }
}
