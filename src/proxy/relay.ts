/**
 * @module Relaying one client request to the upstream instance of its route: under the upstream's own name,
 * with the client's cancellation, its progress coming back under the client's token, and whatever the
 * upstream sends on that call's own stream (log lines, sampling, elicitation) going to this client only.
 * Which of the four era bridges applies is decided here (SPEC §12); the bridges live in eras.ts.
 */
import { withoutEnvelope } from "../modern/meta.js";
import type { Route } from "../resolve.js";
import { forwardOptions } from "./ask.js";
import { bridged, passThrough, pushRounds } from "./eras.js";
import { upstreamError } from "./errors.js";
import type { Params } from "./host.js";
import { clientSpanOf, traced, withTrace } from "./spans.js";
import type { Call, SessionState } from "./state.js";

/** What goes upstream: the upstream's own name, the client's `_meta` less its progress token and envelope. */
function upstreamBody(params: Params, route: Route, rename: boolean): { body: Params; token: unknown } {
  // Most calls carry no _meta: the params as they are, under the upstream's own name.
  if (params._meta === undefined)
    return { body: rename ? { ...params, name: route.original } : params, token: undefined };
  const { _meta, ...rest } = params as { _meta?: Params };
  const token = _meta?.progressToken;
  let meta: Params | undefined;
  if (_meta) {
    const { progressToken: _t, ...others } = withoutEnvelope(_meta);
    meta = Object.keys(others).length ? others : undefined;
  }
  const body = { ...rest, ...(rename ? { name: route.original } : {}), ...(meta ? { _meta: meta } : {}) };
  return { body, token };
}

export function relay(
  s: SessionState,
  route: Route,
  method: string,
  params: Params,
  call: Call,
  rename = false,
): Promise<Params> {
  const { body: plain, token } = upstreamBody(params, route, rename);
  // One CLIENT span under the request's SERVER span, whichever era bridge carries the call upstream.
  const span = clientSpanOf(s, call.span, route, method, params);
  return traced(span, dispatch(s, route, method, withTrace(span, plain), params, call, token));
}

async function dispatch(
  s: SessionState,
  route: Route,
  method: string,
  body: Params,
  params: Params,
  call: Call,
  token: unknown,
): Promise<Params> {
  const ref = s.ref(route.upstream);
  const link = s.link(route.upstream);
  const traffic = s.host.traffic;
  const modernUpstream = link.era === "2026-07-28";
  // Era branch 2 of 3 (docs/architecture.md): which bridge carries the call, by client era × upstream era.
  if (call.client.codec.era === "2026-07-28") {
    return await (modernUpstream
      ? passThrough(s, route, method, body, params, call, token)
      : bridged(s, route, method, body, params, call, token));
  }
  const end = traffic.begin(ref, s);
  const untrack = s.track(route.upstream, call);
  try {
    const level = traffic.levelToRaise(ref, s.logLevel);
    // An upstream another session left quieter would swallow this session's log lines: raise it first.
    if (level && !modernUpstream) await link.request("logging/setLevel", { level }).catch(() => {});
    call.signal.throwIfAborted();
    if (modernUpstream) return await pushRounds(s, route, method, body, call, token);
    return await link.request(method, body, forwardOptions(s, route, call, token));
  } catch (err) {
    throw upstreamError(err, route.upstream);
  } finally {
    end();
    untrack();
  }
}
