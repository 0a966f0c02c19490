/** @module What a session answers, method by method: lists from its resolution, the rest relayed by route. */
import { ErrorCode } from "../protocol.js";
import { type Route, routeUri } from "../resolve.js";
import { rpcError, upstreamError } from "./errors.js";
import type { Params } from "./host.js";
import { listsOf } from "./lists.js";
import { isLogLevel, LOG_LEVELS } from "./peer.js";
import { relay } from "./relay.js";
import type { Call, SessionState } from "./state.js";
import { callTool } from "./tools/pipeline.js";

/** Every request but initialize and ping, which the session answers itself. */
export function handle(
  s: SessionState,
  method: string,
  params: Params,
  call: Call,
): Promise<Params> | Params {
  const r = s.resolution;
  switch (method) {
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
      return relay(s, named(r.prompt, params.name, "prompt"), method, params, call, true);
    case "resources/read":
      return relay(s, byUri(s, params.uri), method, params, call);
    case "resources/subscribe":
    case "resources/unsubscribe":
      return subscription(s, method, params, call);
    case "completion/complete":
      return complete(s, params, call);
    case "logging/setLevel":
      return setLevel(s, params, call);
    default:
      throw rpcError(ErrorCode.MethodNotFound, `Method not found: ${method}`);
  }
}

export function lists(s: SessionState) {
  return listsOf(s.resolution, s.host.tools.of(s.resolution));
}

function named(map: ReadonlyMap<string, Route>, name: unknown, kind: string): Route {
  const route = typeof name === "string" ? map.get(name) : undefined;
  if (!route) throw rpcError(ErrorCode.InvalidParams, `Unknown ${kind}: ${String(name)}`);
  return route;
}

function byUri(s: SessionState, uri: unknown): Route {
  const upstream = typeof uri === "string" ? routeUri(s.resolution, uri) : undefined;
  if (!upstream) throw rpcError(-32002, `Resource not found: ${String(uri)}`, { uri });
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
  throw rpcError(ErrorCode.InvalidParams, `completion/complete: unknown ref type ${String(ref.type)}`);
}

/**
 * The client's level filters what it receives; each upstream instance it uses is set to the most verbose
 * level any of the instance's sessions wants, so one session's choice never silences another's.
 */
async function setLevel(s: SessionState, params: Params, call: Call): Promise<Params> {
  if (!isLogLevel(params.level)) {
    throw rpcError(
      ErrorCode.InvalidParams,
      `logging/setLevel: level must be one of ${LOG_LEVELS.join(", ")}`,
    );
  }
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
