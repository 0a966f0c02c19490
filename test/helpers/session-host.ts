/**
 * A session in process: the real Session and Traffic, a fake host whose upstream links record what reaches them
 * and answer from a script, a fake clock, and the SDK's in-memory transport with a real SDK client (or raw
 * JSON-RPC messages) on the other end. No child process, no socket.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { ClientCapabilities, JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { withAccess } from "../../src/access.js";
import type { Principal } from "../../src/auth/types.js";
import { EMPTY_OFFER, type Offer, type UpstreamState } from "../../src/catalog/inventory.js";
import type { Catalog } from "../../src/catalog/types.js";
import { silentLogger } from "../../src/log.js";
import { getOrCreate } from "../../src/maps.js";
import { createRequestStateCodec } from "../../src/modern/request-state.js";
import { BridgeTable } from "../../src/proxy/bridge.js";
import { HandleStore } from "../../src/proxy/handles.js";
import type { Params, SessionAuthorization, SessionHost, UpstreamLink } from "../../src/proxy/host.js";
import type { Peer } from "../../src/proxy/peer.js";
import { SearchIndexes } from "../../src/proxy/search-indexes.js";
import { Session } from "../../src/proxy/session.js";
import { builtIns } from "../../src/proxy/tools/builtins.js";
import { ToolRegistries } from "../../src/proxy/tools/registry.js";
import { Traffic } from "../../src/proxy/traffic.js";
import { toolsetsReport } from "../../src/report.js";
import { type Resolution, resolve } from "../../src/resolve.js";
import { type Selection, select } from "../../src/selection.js";
import { DEFAULT_LIMITS } from "../../src/state/config.js";
import { MemoryStateStore } from "../../src/state/memory.js";
import type { StateStore } from "../../src/state/types.js";
import { NOOP_TRACING } from "../../src/tracing/noop.js";
import type { Tracing } from "../../src/tracing/types.js";
import type { ForwardOptions } from "../../src/upstream/forward.js";
import { type InstanceRef, sessionRef, sharedRef } from "../../src/upstream/instance.js";

export interface Seen {
  readonly instance: InstanceRef;
  readonly method: string;
  readonly params: Params;
  readonly options: ForwardOptions;
}

/** What a fake upstream does with a request: return a result, or throw. */
export type Script = (method: string, params: Params, options: ForwardOptions) => Promise<Params> | Params;

export class FakeLink implements UpstreamLink {
  capabilities = { tools: {}, prompts: {}, resources: { subscribe: true }, logging: {}, completions: {} };
  constructor(
    private readonly ref: InstanceRef,
    private readonly host: FakeHost,
  ) {}
  get owned(): boolean {
    return this.ref.kind === "session";
  }
  request(method: string, params: Params, options: ForwardOptions = {}): Promise<Params> {
    this.host.seen.push({ instance: this.ref, method, params, options });
    return Promise.resolve().then(() => this.host.script(method, params, options));
  }
  async notify(n: { method: string; params?: Params }): Promise<void> {
    this.host.seen.push({ instance: this.ref, method: n.method, params: n.params ?? {}, options: {} });
  }
}

export class FakeHost implements SessionHost {
  readonly serverInfo = { name: "fake", version: "0" };
  readonly logger = silentLogger;
  readonly calls: { tool: string; outcome: string }[] = [];
  readonly metrics = {
    recordCall: (_toolset: string, tool: string, _upstream: string, outcome: string) =>
      void this.calls.push({ tool, outcome }),
  };
  readonly untied: { upstream: string; kind: string }[] = [];
  readonly sessions = new Set<Session>();
  readonly traffic: Traffic;
  readonly seen: Seen[] = [];
  capture = true;
  readonly cacheTtlMs = 60_000;
  readonly bridges = new BridgeTable();
  readonly requestStates = createRequestStateCodec({
    keys: [Buffer.alloc(32, 7)],
    ttlMs: 300_000,
    now: () => this.clock,
  });
  /** find_tools indexes: a test that counts or bounds them gives its own (before its first search). */
  searchIndexes = new SearchIndexes();
  /** The real tool registries, with the real built-ins on this host's services. */
  readonly tools: ToolRegistries;
  clock = 1_000;
  /** The state store (memory on the fake clock unless a test gives another) and the handles on it. */
  readonly state: StateStore;
  readonly handles: HandleStore;
  tracing: Tracing = NOOP_TRACING;
  script: Script = () => ({ content: [{ type: "text", text: "ok" }] });
  /** OAuth upstreams: set by a test that needs "authorization required". */
  authorization?: SessionAuthorization;
  private readonly links = new Map<string, FakeLink>();

  constructor(
    readonly catalog: Catalog,
    state?: StateStore,
  ) {
    const limits = { ...DEFAULT_LIMITS, maxOwnerBytes: 1 << 20 };
    this.state = state ?? new MemoryStateStore({ limits, now: () => this.clock });
    this.handles = new HandleStore({ store: this.state, maxOwnerBytes: 1 << 20, logger: silentLogger });
    const host = this;
    this.tools = new ToolRegistries(
      builtIns({
        toolsetsTool: true,
        get capture() {
          return host.capture;
        },
        report: (selection, resolution) => host.report(selection, resolution),
        handles: this.handles,
        get indexes() {
          return host.searchIndexes;
        },
      }),
    );
    this.traffic = new Traffic({
      users: (ref) => [...this.sessions].filter((s) => s.refs.get(ref.upstream)?.id === ref.id) as Peer[],
      upstream: (name) => catalog.upstreams.get(name),
      logger: silentLogger,
      untied: (upstream, kind) => void this.untied.push({ upstream, kind }),
    });
  }

  link(ref: InstanceRef): FakeLink {
    return getOrCreate(this.links, ref.id, () => new FakeLink(ref, this));
  }
  upstream(name: string) {
    return this.catalog.upstreams.get(name);
  }
  report(selection: Selection, resolution: Resolution) {
    return toolsetsReport(this.catalog, selection, resolution, [], resolution);
  }
  now(): number {
    return this.clock;
  }
  async closeSession(session: Session): Promise<void> {
    if (!this.sessions.delete(session)) return;
    await session.close();
  }

  /**
   * A session for `query`, every upstream ready with `offers`; per-session upstreams get their own instance.
   * With a principal, the selection is what it may have (toolsets it does not meet are forbidden).
   * `stateOwner` as a 2026-07-28 context is given one (default: the session's own).
   */
  open(
    query: string,
    offers: Record<string, Partial<Offer>>,
    key = `k${this.sessions.size}`,
    principal?: Principal,
    stateOwner?: string | null,
  ): Session {
    const selected = select(this.catalog, query);
    if (!selected.ok) throw new Error(selected.error);
    const picked = { selection: withAccess(this.catalog, selected.selection, principal) };
    const inventory = new Map<string, UpstreamState>(
      Object.entries(offers).map(([u, o]) => [u, { status: "ready", ...EMPTY_OFFER, ...o }]),
    );
    const refs = new Map<string, InstanceRef>();
    for (const u of this.catalog.upstreams.values()) {
      refs.set(u.name, u.isolation === "per-session" ? sessionRef(u.name, key) : sharedRef(u.name));
    }
    const session = new Session(this, {
      id: key,
      kind: "session",
      client: "test",
      binding: "",
      identity: undefined,
      selection: picked.selection,
      resolution: resolve(this.catalog, picked.selection, inventory),
      refs,
      digest: key,
      sessionKey: key,
      credentials: { names: [], values: {} },
      principal,
      ...(stateOwner !== undefined ? { stateOwner } : {}),
    });
    this.sessions.add(session);
    return session;
  }
}

/** A real SDK client connected to `session` in memory. */
export async function sdkClient(session: Session, capabilities: ClientCapabilities = {}): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await session.connect(serverSide);
  const client = new Client({ name: "unit", version: "1" }, { capabilities });
  await client.connect(clientSide);
  return client;
}

/** Raw JSON-RPC on the client end: what the session sends, as it sends it. */
export async function rawClient(session: Session) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const received: JSONRPCMessage[] = [];
  clientSide.onmessage = (m) => void received.push(m);
  await session.connect(serverSide);
  await clientSide.start();
  const send = (m: Record<string, unknown>) => clientSide.send({ jsonrpc: "2.0", ...m } as JSONRPCMessage);
  const answer = async (id: unknown) => {
    for (let i = 0; i < 200; i++) {
      const m = received.find((r) => (r as { id?: unknown }).id === id && !("method" in r));
      if (m) return m as { result?: Params; error?: { code: number; message: string; data?: unknown } };
      await new Promise((r) => setImmediate(r));
    }
    throw new Error(`no answer to ${String(id)}`);
  };
  return { received, send, answer };
}
