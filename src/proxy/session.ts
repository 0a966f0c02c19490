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
import { getOrCreate } from "../maps.js";
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "../protocol.js";
import type { Resolution } from "../resolve.js";
import type { Selection } from "../selection.js";
import type { InstanceRef } from "../upstream/instance.js";
import { sharedRef } from "../upstream/instance.js";
import { rpcError } from "./errors.js";
import { HandleStore } from "./handles.js";
import type { Params, SessionHost, UpstreamLink } from "./host.js";
import type { Credentials } from "./instances.js";
import { handle, lists } from "./methods.js";
import { Outbound } from "./outbound.js";
import type { LogLevel } from "./peer.js";
import { askClient } from "./relay.js";
import type { Call, SessionState } from "./state.js";
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
  clientCapabilities: ClientCapabilities | undefined;
  clientInfo: { name: string; version: string } | undefined;
  protocolVersion: string | undefined;
  private current: Resolution;
  private currentRefs: ReadonlyMap<string, InstanceRef>;
  private readonly capabilities: ServerCapabilities;
  private transport: SessionTransport | undefined;
  private readonly inflight = new Map<RequestId, AbortController>();
  /** This session's calls in flight per upstream, latest last: its instances' untied messages ride on them. */
  private readonly calls = new Map<string, Call[]>();
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
    this.lastSeen = host.now();
    this.handles = new HandleStore(host.stateMaxBytes);
    this.capabilities = capabilitiesOf(init.resolution.upstreams.map((u) => this.link(u).capabilities ?? {}));
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
      void this.request(
        m as Message & { id: RequestId; method: string },
        typeof rid === "string" ? rid : undefined,
      );
    } else if (m.method !== undefined) this.notification(m.method, m.params ?? {});
    else if (m.id !== undefined) this.outbound.settle(m as Message & { id: RequestId });
  }

  private async request(
    m: { id: RequestId; method: string; params?: Params },
    requestId?: string,
  ): Promise<void> {
    const { id } = m;
    const controller = new AbortController();
    this.inflight.set(id, controller);
    const call: Call = {
      id,
      signal: controller.signal,
      ...(requestId ? { requestId } : {}),
      notify: (n) => {
        if (!controller.signal.aborted) void this.send({ jsonrpc: "2.0", ...n } as JSONRPCMessage, id);
      },
      ask: (r, signal) => this.outbound.request(r, signal, id),
    };
    let answer: JSONRPCMessage;
    try {
      const result = await this.answer(m.method, m.params ?? {}, call);
      answer = { jsonrpc: "2.0", id, result } as JSONRPCMessage;
    } catch (err) {
      const e = err as { code?: unknown; message?: string; data?: unknown };
      const code = Number.isSafeInteger(e?.code) ? (e.code as number) : -32603;
      const data = e?.data !== undefined ? { data: e.data } : {};
      answer = { jsonrpc: "2.0", id, error: { code, message: e?.message ?? "Internal error", ...data } };
    } finally {
      if (this.inflight.get(id) === controller) this.inflight.delete(id);
    }
    // A cancelled request gets no answer; the transport may end whatever waits for it.
    if (controller.signal.aborted) this.transport?.abandon?.(id);
    else await this.send(answer, id);
  }

  private answer(method: string, params: Params, call: Call): Promise<Params> | Params {
    if (method === "initialize") return this.initialize(params);
    if (method === "ping") return {};
    return handle(this, method, params, call);
  }

  private initialize(params: Params): Params {
    const requested = params.protocolVersion;
    const caps = params.capabilities;
    const info = params.clientInfo as { name?: unknown; version?: unknown } | undefined;
    if (
      typeof requested !== "string" ||
      !caps ||
      typeof caps !== "object" ||
      typeof info?.name !== "string"
    ) {
      throw rpcError(
        -32602,
        "Invalid initialize params: protocolVersion, capabilities and clientInfo are required",
      );
    }
    const version = SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
    this.protocolVersion = version;
    this.clientCapabilities = caps as ClientCapabilities;
    this.clientInfo = { name: info.name, version: String(info.version ?? "") };
    const instructions = this.current.instructions;
    return {
      protocolVersion: version,
      capabilities: this.capabilities,
      serverInfo: this.host.serverInfo,
      ...(instructions ? { instructions } : {}),
    };
  }

  private notification(method: string, params: Params): void {
    if (method === "notifications/cancelled") {
      const id = params.requestId as RequestId | undefined;
      if (id !== undefined) this.inflight.get(id)?.abort(params.reason ?? "cancelled");
      return;
    }
    if (method === "notifications/roots/list_changed") {
      // Only this session's own instances ever asked this client for its roots.
      for (const u of this.current.upstreams) {
        if (this.ref(u).kind === "session")
          void this.link(u)
            .notify({ method })
            .catch(() => {});
      }
    }
  }

  /** Sends one message; one tied to a request rides on that request's stream. */
  private async send(message: JSONRPCMessage, relatedRequestId?: RequestId): Promise<void> {
    if (this.closed || !this.transport) return;
    await this.transport.send(message, relatedRequestId !== undefined ? { relatedRequestId } : undefined);
  }

  track(upstream: string, call: Call): () => void {
    const calls = getOrCreate(this.calls, upstream, () => [] as Call[]);
    calls.push(call);
    return () => {
      calls.splice(calls.indexOf(call), 1);
      if (!calls.length && this.calls.get(upstream) === calls) this.calls.delete(upstream);
    };
  }

  /** Peer: a notification not tied to a request (list changes, resource updates, a per-session instance's logs). */
  notify(notification: { method: string; params?: Params }, upstream?: string): void {
    const call = upstream ? this.calls.get(upstream)?.at(-1) : undefined;
    if (call) call.notify(notification);
    else void this.send({ jsonrpc: "2.0", ...notification } as JSONRPCMessage).catch(() => {});
  }

  /** Peer: a server→client request of an instance that is tied to no call (a per-session instance's). */
  ask(request: { method: string; params?: Params }, signal: AbortSignal, upstream: string): Promise<Params> {
    return askClient(this, request, signal, upstream);
  }

  standalone(
    request: { method: string; params?: Params },
    signal: AbortSignal,
    upstream?: string,
  ): Promise<Params> {
    const call = upstream ? this.calls.get(upstream)?.at(-1) : undefined;
    return call ? call.ask(request, signal) : this.outbound.request(request, signal);
  }

  /** Swaps in a new resolution (whole state); tells the client which of its lists changed. */
  update(next: Resolution, refs?: ReadonlyMap<string, InstanceRef>): void {
    const before = lists(this);
    this.current = next;
    if (refs) this.currentRefs = refs;
    const after = lists(this);
    const caps = this.capabilities;
    const changed = (a: unknown, b: unknown) => JSON.stringify(a) !== JSON.stringify(b);
    if (changed(before.tools, after.tools)) this.notify({ method: "notifications/tools/list_changed" });
    if (caps.prompts && changed(before.prompts, after.prompts))
      this.notify({ method: "notifications/prompts/list_changed" });
    if (caps.resources && changed([before.resources, before.templates], [after.resources, after.templates])) {
      this.notify({ method: "notifications/resources/list_changed" });
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const c of this.inflight.values()) c.abort("session closed");
    this.outbound.failAll("Session closed before the answer");
    const transport = this.transport;
    this.transport = undefined;
    await transport?.close().catch(() => {});
  }
}

/** What a session advertises: tools always; prompts, resources, completions, logging as its upstreams offer. */
export function capabilitiesOf(upstreams: readonly ServerCapabilities[]): ServerCapabilities {
  const any = (f: (c: ServerCapabilities) => unknown) => upstreams.some((c) => !!f(c));
  return {
    tools: { listChanged: true },
    ...(any((c) => c.prompts) ? { prompts: { listChanged: true } } : {}),
    ...(any((c) => c.resources)
      ? {
          resources: {
            listChanged: true,
            ...(any((c) => c.resources?.subscribe) ? { subscribe: true } : {}),
          },
        }
      : {}),
    ...(any((c) => c.completions) ? { completions: {} } : {}),
    ...(any((c) => c.logging) ? { logging: {} } : {}),
  };
}
