/**
 * @module `subscriptions/listen` (2026-07-28): one long-lived stream per listener, with the notifications it
 * opted into and this session can give: list changes of what its URL sees, and updates of the resources it
 * named, each tagged with the listen request's id. Request-scoped progress and log lines never go there.
 */
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import { META_KEYS } from "../modern/wire.js";
import { routeUri } from "../resolve.js";
import { errors } from "../wire/errors.js";
import type { Params, Peer } from "./peer.js";
import type { Call, SessionState } from "./state.js";

type Kind = "tools" | "prompts" | "resources";
const FLAGS: Record<Kind, string> = {
  tools: "toolsListChanged",
  prompts: "promptsListChanged",
  resources: "resourcesListChanged",
};
/** Listen streams one session (or one 2026-07-28 context) may hold open at once. */
const MAX_LISTENERS = 64;

export interface ListenHost {
  listen(params: Params, call: Call): Promise<Params>;
}

interface Listener {
  readonly kinds: ReadonlySet<Kind>;
  readonly send: (n: { method: string; params?: Params }) => void;
}

export class Listeners implements ListenHost {
  private readonly streams = new Set<Listener>();
  private readonly ends = new Set<() => void>();

  constructor(
    private readonly s: SessionState & {
      readonly capabilities: { prompts?: object; resources?: { subscribe?: boolean } };
    },
  ) {}

  /** Listen streams open now. */
  get open(): number {
    return this.streams.size;
  }

  /** Serves one listen request until its stream ends (the client closes it, or cancels it on stdio). */
  async listen(params: Params, call: Call): Promise<Params> {
    if (this.streams.size >= MAX_LISTENERS) throw errors.listenStreams(MAX_LISTENERS);
    const wanted = (params.notifications ?? {}) as Record<string, unknown>;
    const caps = this.s.capabilities;
    const offered: Record<Kind, boolean> = {
      tools: true,
      prompts: !!caps.prompts,
      resources: !!caps.resources,
    };
    const kinds = new Set<Kind>();
    const honoured: Params = {};
    for (const kind of Object.keys(FLAGS) as Kind[]) {
      if (wanted[FLAGS[kind]] === true && offered[kind]) {
        kinds.add(kind);
        honoured[FLAGS[kind]] = true;
      }
    }
    const tag = { [META_KEYS.subscriptionId]: call.id };
    const send = (n: { method: string; params?: Params }) =>
      call.notify({
        method: n.method,
        params: { ...n.params, _meta: { ...(n.params?._meta as Params | undefined), ...tag } },
      });
    const uris =
      Array.isArray(wanted.resourceSubscriptions) && caps.resources?.subscribe
        ? wanted.resourceSubscriptions
        : [];
    const subscribed = await this.subscribe(
      uris.filter((u): u is string => typeof u === "string"),
      send,
      call.id,
    );
    if (subscribed.uris.length) honoured.resourceSubscriptions = subscribed.uris;
    call.notify({
      method: "notifications/subscriptions/acknowledged",
      params: { notifications: honoured, _meta: tag },
    });
    const listener: Listener = { kinds, send };
    this.streams.add(listener);
    let end: () => void = () => {};
    await new Promise<void>((resolve) => {
      end = resolve;
      if (call.signal.aborted) return resolve();
      call.signal.addEventListener("abort", () => resolve(), { once: true });
      this.ends.add(resolve);
    });
    this.ends.delete(end);
    this.streams.delete(listener);
    subscribed.release();
    return { _meta: tag };
  }

  /** Resource subscriptions of one listener: one upstream subscription per (instance, URI) however many ask. */
  private async subscribe(uris: string[], send: Listener["send"], id: RequestId) {
    const s = this.s;
    const peer: Peer = {
      logLevel: "emergency",
      notify: (n) => send(n),
      ask: () => Promise.reject(errors.listenNotAsked(String(id))),
    };
    const held: { upstream: string; uri: string }[] = [];
    for (const uri of [...new Set(uris)]) {
      const upstream = routeUri(s.resolution, uri);
      if (!upstream) continue;
      const ref = s.ref(upstream);
      if (s.host.traffic.subscribe(ref, uri, peer)) {
        const ok = await s
          .link(upstream)
          .request("resources/subscribe", { uri })
          .then(
            () => true,
            () => false,
          );
        if (!ok) {
          s.host.traffic.unsubscribe(ref, uri, peer);
          continue;
        }
      }
      held.push({ upstream, uri });
    }
    return {
      uris: held.map((h) => h.uri),
      release: () => {
        for (const { upstream, uri } of held) {
          const ref = s.ref(upstream);
          if (s.host.traffic.unsubscribe(ref, uri, peer))
            void s
              .link(upstream)
              .request("resources/unsubscribe", { uri })
              .catch(() => {});
        }
      },
    };
  }

  /** A list this session sees changed: every listener that opted into that kind hears it. */
  changed(kind: Kind): void {
    for (const l of this.streams)
      if (l.kinds.has(kind)) l.send({ method: `notifications/${kind}/list_changed` });
  }

  /** The session closes: every listen stream ends with its result. */
  close(): void {
    for (const end of this.ends) end();
    this.ends.clear();
  }
}
