/**
 * @module The bridges between a client's protocol era and its upstream's (SPEC §12). B2, 2026-07-28 both
 * ways: `input_required` passes through, its `requestState` wrapped in ours so it is bound to our caller.
 * B3, a 2026-07-28 client and a 2025 upstream: the upstream's server→client requests become `input_required`
 * rounds while its call stays parked (bridge.ts). B4, a 2025 client and a 2026-07-28 upstream: the upstream's
 * `input_required` becomes server→client requests to the session, then toolpacks retries upstream.
 */

import { legacyResult, resultTypeOf } from "../modern/meta.js";
import { requestDigest } from "../modern/request-state.js";
import type { Route } from "../resolve.js";
import { answerItself } from "../upstream/client.js";
import { CODE, errors } from "../wire/errors.js";
import type { Signal } from "../wire/signal.js";
import { askClient, forwardOptions } from "./ask.js";
import { Bridge } from "./bridge.js";
import { missingCapability } from "./capability.js";
import { upstreamError } from "./errors.js";
import type { Params } from "./host.js";
import { passes } from "./peer.js";
import type { Call, SessionState } from "./state.js";
import { clientOf } from "./state.js";

/** At most this many input rounds in one call of a 2025 client (B4), as the SDK's own shim. */
const MAX_ROUNDS = 8;
const DEFAULT_INPUT_TIMEOUT_MS = 300_000;

function refused(s: SessionState, why: string): Error {
  s.host.logger.debug("requestState refused", { session: s.digest, why });
  return errors.requestState();
}

/** Opens a retry's `requestState` for this caller and this request, or throws the in-band refusal. */
function openState(s: SessionState, state: unknown, method: string, params: Params) {
  if (typeof state !== "string") throw refused(s, "not a string");
  const opened = s.host.requestStates.open(state, { owner: s.owner, request: requestDigest(method, params) });
  if (!opened.ok) throw refused(s, opened.reason);
  return opened.state;
}

/** B2: a 2026-07-28 client through to a 2026-07-28 upstream, by route; no state kept in toolpacks. */
export async function passThrough(
  s: SessionState,
  route: Route,
  method: string,
  body: Params,
  params: Params,
  call: Call,
  token: unknown,
): Promise<Params> {
  let sent = body;
  const bound = call.sentParams ?? params;
  if (params.requestState !== undefined) {
    const state = openState(s, params.requestState, method, bound);
    if (state.inner === undefined || state.upstream !== route.upstream)
      throw refused(s, "not a pass-through state");
    sent = { ...body, requestState: state.inner };
  }
  const envelope = call.client.envelope!;
  try {
    const result = await s.link(route.upstream).request(
      method,
      sent,
      forwardOptions(s, route, call, token, {
        clientCapabilities: envelope.clientCapabilities,
        ...(envelope.clientInfo ? { clientInfo: envelope.clientInfo } : {}),
        ...(envelope.logLevel ? { logLevel: envelope.logLevel } : {}),
      }),
    );
    if (resultTypeOf(result) !== "input_required" || typeof result.requestState !== "string") return result;
    const request = requestDigest(method, bound);
    const wrapped = s.host.requestStates.seal({
      bridge: "-",
      upstream: route.upstream,
      owner: s.owner,
      request,
      inner: result.requestState,
    });
    return { ...result, requestState: wrapped };
  } catch (err) {
    throw upstreamError(err, route.upstream);
  }
}

/** B3: a 2026-07-28 client and a 2025 upstream. A retry continues the parked call it names. */
export async function bridged(
  s: SessionState,
  route: Route,
  method: string,
  body: Params,
  params: Params,
  call: Call,
  token: unknown,
): Promise<Params> {
  const table = s.host.bridges;
  // The digest a state is bound to: computed only when a round goes out or a retry comes in.
  const bound = call.sentParams ?? params;
  const request = () => requestDigest(method, bound);
  if (params.requestState !== undefined) {
    const state = openState(s, params.requestState, method, bound);
    const bridge =
      state.inner === undefined ? (table.get(state.bridge) as Bridge<Call> | undefined) : undefined;
    // Another replica parked it, or it expired: never run the call again here (it may still be running there).
    if (!bridge || bridge.upstream !== route.upstream) throw refused(s, "no such bridge on this replica");
    table.delete(bridge);
    bridge.answer(params.inputResponses);
    return round(s, bridge, route, call, token, request);
  }
  const spec = s.host.upstream(route.upstream);
  const timeoutMs = spec?.inputTimeoutMs ?? DEFAULT_INPUT_TIMEOUT_MS;
  const expired = () =>
    s.host.logger.info("a parked call ended: its client did not retry within input_timeout", {
      upstream: route.upstream,
      session: s.digest,
      input_timeout_ms: timeoutMs,
    });
  const bridge = new Bridge<Call>(
    route.upstream,
    s,
    clientOf(s, call),
    timeoutMs,
    (b) => table.delete(b),
    expired,
  );
  const ref = s.ref(route.upstream);
  const end = s.host.traffic.begin(ref, s);
  const asked = (r: { method: string; params?: Params }, signal: Signal): Promise<Params> => {
    const own = spec ? answerItself(spec, s.link(route.upstream).owned, r.method) : undefined;
    if (own) return Promise.resolve(own as unknown as Params);
    const latest = bridge.latest ?? call;
    const needs = missingCapability(latest.client.capabilities, r.method, r.params);
    if (needs === undefined) return bridge.ask(r, signal);
    // roots/list of a client without roots: the config's roots (maybe none).
    if (r.method === "roots/list") return askClient(s, r, signal, route.upstream, latest);
    // Anything else the client did not declare: the call needs it, so the client gets -32021 (HTTP 400).
    bridge.fail(errors.needsCapability(needs, requiredCapabilities(needs)));
    return Promise.reject(errors.clientLacks(r.method, needs, "request"));
  };
  // An untied request of this session's own instance joins the bridge too.
  const untrack = s.track(route.upstream, { ...call, ask: asked, notify: (n) => bridge.notify(n) });
  // The parked call holds its connection until it ends: it counts against its client all that time.
  const upstream = s.link(route.upstream).request(method, body, {
    signal: bridge.cancellation,
    client: bridge.client,
    onProgress: (p) => bridge.progress(p),
    onNotification: (n) => {
      const level = bridge.attached?.client.logLevel;
      if (n.method !== "notifications/message" || (level !== undefined && passes(n.params?.level, level)))
        bridge.notify(n);
    },
    onServerRequest: asked,
  });
  upstream.then(end, end).finally(untrack);
  bridge.hold(upstream);
  return round(s, bridge, route, call, token, request);
}

/** One round: the call's result, or the requests it waits on as an `input_required` result (then parked). */
async function round(
  s: SessionState,
  bridge: Bridge<Call>,
  route: Route,
  call: Call,
  token: unknown,
  request: () => string,
): Promise<Params> {
  bridge.attach(call, token);
  // Closing the request's stream cancels it (2026-07-28): the parked upstream call with it.
  const onAbort = () => bridge.cancel("the client cancelled the call");
  call.signal.addEventListener("abort", onAbort, { once: true });
  try {
    const step = await bridge.next();
    if ("done" in step) return step.done;
    const table = s.host.bridges;
    const refused = table.refusal(bridge.client);
    if (refused) {
      bridge.cancel("too many calls are waiting for input");
      throw refused;
    }
    table.add(bridge);
    bridge.park();
    const requestState = s.host.requestStates.seal({
      bridge: bridge.id,
      upstream: route.upstream,
      owner: s.owner,
      request: request(),
    });
    return { resultType: "input_required", inputRequests: step.ask, requestState };
  } catch (err) {
    throw upstreamError(err, route.upstream);
  } finally {
    call.signal.removeEventListener("abort", onAbort);
  }
}

/** B4: a 2025 client and a 2026-07-28 upstream: input rounds pushed to the session, retried upstream. */
export async function pushRounds(
  s: SessionState,
  route: Route,
  method: string,
  body: Params,
  call: Call,
  token: unknown,
): Promise<Params> {
  const link = s.link(route.upstream);
  const envelope = {
    clientCapabilities: (call.client.capabilities ?? {}) as Params,
    ...(s.clientInfo ? { clientInfo: s.clientInfo } : {}),
    ...(call.client.logLevel ? { logLevel: call.client.logLevel } : {}),
  };
  let sent = body;
  for (let n = 0; ; n++) {
    let result: Params;
    try {
      result = await link.request(method, sent, forwardOptions(s, route, call, token, envelope));
    } catch (err) {
      const e = err as { code?: number; message?: string };
      // 2026-07-28 says -32602 for a resource not found; a 2025 client expects -32002.
      if (
        method === "resources/read" &&
        e?.code === CODE.invalidParams &&
        /not found/i.test(String(e.message))
      )
        throw errors.as2025ResourceNotFound(upstreamError(err, route.upstream));
      throw err;
    }
    if (resultTypeOf(result) !== "input_required") return legacyResult(result);
    if (n >= MAX_ROUNDS) throw errors.tooManyRounds(route.upstream, MAX_ROUNDS);
    const responses: Params = {};
    try {
      for (const [key, r] of Object.entries((result.inputRequests ?? {}) as Record<string, Params>)) {
        responses[key] = await askClient(
          s,
          r as { method: string; params?: Params },
          call.signal,
          route.upstream,
          call,
        );
      }
    } catch (err) {
      if (method !== "tools/call") throw err;
      return { isError: true, content: [{ type: "text", text: (err as Error).message }] };
    }
    const { requestState } = result;
    sent = { ...body, inputResponses: responses, ...(requestState !== undefined ? { requestState } : {}) };
  }
}

/** `sampling` → `{sampling: {}}`, `elicitation.url` → `{elicitation: {url: {}}}`: the shape -32021's data takes. */
function requiredCapabilities(needs: string): Record<string, object> {
  const [head, mode] = needs.split(".") as [string, string | undefined];
  return { [head]: mode ? { [mode]: {} } : {} };
}
