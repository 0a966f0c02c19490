/**
 * @module The one dispatcher: what a session answers, method by method, for a request of either era (its codec
 * has refused what the era does not have, and finishes the answer): the handshake, lists from its resolution,
 * tools through the tool-call pipeline, the rest relayed by route.
 */
import type { ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { MODERN_VERSION } from "../modern/wire.js";
import { type Route, routeUri } from "../resolve.js";
import { errors } from "../wire/errors.js";
import { upstreamError } from "./errors.js";
import type { Params } from "./host.js";
import type { ListenHost } from "./listen.js";
import { listsOf } from "./lists.js";
import { type Ending, observe, outcomeOf } from "./observe.js";
import { isLogLevel, LOG_LEVELS } from "./peer.js";
import { relay } from "./relay.js";
import type { Call, SessionState } from "./state.js";
import { callTool } from "./tools/pipeline.js";

/** What the dispatcher needs of a session beyond its state: the handshake, its capabilities, its listeners. */
export interface Dispatched extends SessionState {
  readonly capabilities: ServerCapabilities;
  readonly listeners: ListenHost;
  /** The 2025 handshake: the session takes the client's initialize and answers it. */
  initialize(params: Params): Params | Promise<Params>;
}

export function handle(s: Dispatched, method: string, params: Params, call: Call): Promise<Params> | Params {
  const r = s.resolution;
  switch (method) {
    case "initialize":
      return s.initialize(params);
    case "ping":
      return {};
    case "server/discover":
      return discover(s);
    case "subscriptions/listen":
      return s.listeners.listen(params, call);
    case "tools/list":
      return lists(s).tools as unknown as Params;
    case "prompts/list":
      return lists(s).prompts as unknown as Params;
    case "resources/list":
      return lists(s).resources as unknown as Params;
    case "resources/templates/list":
      return lists(s).templates as unknown as Params;
    case "tools/call":
      return callTool(s, params, call);
    case "prompts/get":
      return observed(s, call, { method, name: params.name, args: params.arguments }, () => {
        const route = named(r.prompt, params.name, "prompt");
        return { route, toolset: route.toolsets[0], run: () => relay(s, route, method, params, call, true) };
      });
    case "resources/read":
      return observed(s, call, { method, name: params.uri }, () => {
        const route = byUri(s, params.uri);
        const toolset = s.resolution.resource.get(route.name)?.toolsets[0];
        return { route, toolset, run: () => relay(s, route, method, params, call) };
      });
    case "resources/subscribe":
    case "resources/unsubscribe":
      return subscription(s, method, params, call);
    case "completion/complete":
      return complete(s, params, call);
    case "logging/setLevel":
      return setLevel(s, params, call);
    default:
      throw errors.methodNotFound(method);
  }
}

/**
 * prompts/get and resources/read, observed as a tool call is (the observe stage's counterpart): `find` routes
 * the name (a name the session has not: refused) and says what runs; how that ended is observed once.
 */
async function observed(
  s: SessionState,
  call: Call,
  asked: { method: "prompts/get" | "resources/read"; name: unknown; args?: unknown },
  find: () => { route: Route; toolset: string | undefined; run: () => Promise<Params> },
): Promise<Params> {
  const started = performance.now();
  const seen = (route: Route | undefined, toolset: string | undefined, ending: Ending) =>
    observe(s, call, { ...asked, route, toolset, ending, started });
  let found: ReturnType<typeof find>;
  try {
    found = find();
  } catch (err) {
    const reason = asked.method === "prompts/get" ? "unknown_prompt" : "unknown_resource";
    seen(undefined, undefined, { outcome: "refused", reason });
    throw err;
  }
  let ending: Ending = { outcome: "error" };
  try {
    const result = await found.run();
    ending = { outcome: "ok" };
    return result;
  } catch (err) {
    ending = { outcome: outcomeOf(err, call.signal) };
    throw err;
  } finally {
    seen(found.route, found.toolset, ending);
  }
}

/** `server/discover`: what this selection offers, for the client that asks (SPEC §12.1). */
function discover(s: Dispatched): Params {
  const instructions = s.resolution.instructions;
  return {
    supportedVersions: [MODERN_VERSION],
    capabilities: s.capabilities,
    ...(instructions ? { instructions } : {}),
  };
}

export function lists(s: SessionState) {
  return listsOf(s.resolution, s.host.tools.of(s.resolution));
}

function named(map: ReadonlyMap<string, Route>, name: unknown, kind: string): Route {
  const route = typeof name === "string" ? map.get(name) : undefined;
  if (!route) throw errors.unknown(kind, name);
  return route;
}

function byUri(s: SessionState, uri: unknown): Route {
  const upstream = typeof uri === "string" ? routeUri(s.resolution, uri) : undefined;
  if (!upstream) throw errors.resourceNotFound(uri);
  const name = uri as string;
  return { kind: "resource", name, original: name, upstream, toolsets: [], definition: {} };
}

async function subscription(s: SessionState, method: string, params: Params, call: Call): Promise<Params> {
  const route = byUri(s, params.uri);
  const uri = params.uri as string;
  const ref = s.ref(route.upstream);
  const traffic = s.host.traffic;
  const subscribe = method === "resources/subscribe";
  const ask = subscribe ? traffic.subscribe(ref, uri, s) : traffic.unsubscribe(ref, uri, s);
  if (!ask) return {};
  try {
    return await relay(s, route, method, params, call);
  } catch (err) {
    // Not subscribed upstream after all: forget it, or the next subscribe would not ask again.
    if (subscribe) traffic.unsubscribe(ref, uri, s);
    throw err;
  }
}

function complete(s: SessionState, params: Params, call: Call): Promise<Params> {
  const ref = (params.ref ?? {}) as { type?: string; name?: string; uri?: string };
  if (ref.type === "ref/prompt") {
    const route = named(s.resolution.prompt, ref.name, "prompt");
    return relay(s, route, "completion/complete", { ...params, ref: { ...ref, name: route.original } }, call);
  }
  if (ref.type === "ref/resource") return relay(s, byUri(s, ref.uri), "completion/complete", params, call);
  throw errors.unknownRefType(ref.type);
}

/**
 * The client's level filters what it receives; each upstream instance it uses is set to the most verbose
 * level any of the instance's sessions wants, so one session's choice never silences another's.
 */
async function setLevel(s: SessionState, params: Params, call: Call): Promise<Params> {
  if (!isLogLevel(params.level)) throw errors.badLogLevel(LOG_LEVELS);
  s.logLevel = params.level;
  const traffic = s.host.traffic;
  await Promise.all(
    s.resolution.upstreams
      .filter((u) => s.link(u).capabilities?.logging)
      .map((u) =>
        s
          .link(u)
          .request("logging/setLevel", { level: traffic.upstreamLevel(s.ref(u)) }, { signal: call.signal }),
      ),
  ).catch((err) => {
    throw upstreamError(err, "logging");
  });
  return {};
}
