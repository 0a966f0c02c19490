/**
 * @module Relaying one client request to the upstream instance of its route: under the upstream's own name,
 * with the client's cancellation, its progress coming back under the client's token, and whatever the
 * upstream sends on that call's own stream (log lines, sampling, elicitation) going to this client only.
 */
import type { Route } from "../resolve.js";
import { configRoots } from "../upstream/client.js";
import { missingCapability } from "./capability.js";
import { rpcError, upstreamError } from "./errors.js";
import type { Params } from "./host.js";
import { passes } from "./peer.js";
import { clientSpanOf, metaFor, traced } from "./spans.js";
import type { Call, SessionState } from "./state.js";

export async function relay(
  s: SessionState,
  route: Route,
  method: string,
  params: Params,
  call: Call,
  rename = false,
): Promise<Params> {
  const { _meta, ...rest } = params as { _meta?: Params };
  const token = _meta?.progressToken;
  let meta = _meta;
  if (token !== undefined) {
    const { progressToken: _t, ...others } = _meta!;
    meta = Object.keys(others).length ? others : undefined;
  }
  const span = clientSpanOf(s, call.span, route, method, params);
  const body = { ...rest, ...(rename ? { name: route.original } : {}), ...metaFor(span, meta) };
  const ref = s.ref(route.upstream);
  const link = s.link(route.upstream);
  const traffic = s.host.traffic;
  const end = traffic.begin(ref, s);
  const untrack = s.track(route.upstream, call);
  try {
    const level = traffic.levelToRaise(ref, s.logLevel);
    // An upstream another session left quieter would swallow this session's log lines: raise it first.
    if (level) await link.request("logging/setLevel", { level }).catch(() => {});
    call.signal.throwIfAborted();
    const answer = link.request(method, body, {
      signal: call.signal,
      ...(token !== undefined
        ? {
            onProgress: (p: Params) =>
              call.notify({ method: "notifications/progress", params: { ...p, progressToken: token } }),
          }
        : {}),
      onNotification: (n) => {
        if (n.method !== "notifications/message" || passes(n.params?.level, s.logLevel)) call.notify(n);
      },
      onServerRequest: (request, signal) => askClient(s, request, signal, route.upstream, call),
    });
    return await traced(span, answer);
  } catch (err) {
    span.end({ error: err });
    throw upstreamError(err, route.upstream);
  } finally {
    end();
    untrack();
  }
}

/**
 * A server→client request for this session's client: on the stream of `call` when it is tied to one, else on
 * the standalone stream. A client without the capability is not asked: the upstream gets -32601 at once.
 */
export async function askClient(
  s: SessionState,
  request: { method: string; params?: Params },
  signal: AbortSignal,
  upstream: string,
  call?: Call,
): Promise<Params> {
  const needs = missingCapability(s.clientCapabilities, request.method, request.params);
  if (needs && request.method === "roots/list") {
    // A per-session instance whose client has no roots gets the roots the config declares (maybe none).
    const spec = s.host.upstream(upstream);
    return { roots: spec ? configRoots(spec) : [] };
  }
  if (needs) {
    throw rpcError(
      -32601,
      `the client of this session does not support ${request.method} (no ${needs} capability)`,
    );
  }
  const id = (request.params as { elicitationId?: unknown } | undefined)?.elicitationId;
  if (request.method === "elicitation/create" && typeof id === "string") {
    s.host.traffic.elicited(s.ref(upstream), id, s);
  }
  try {
    return call ? await call.ask(request, signal) : await s.standalone(request, signal, upstream);
  } catch (err) {
    throw upstreamError(err, "client");
  }
}
