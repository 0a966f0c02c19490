/**
 * @module What an upstream sends during one call, handed to that call's client: its progress under the
 * client's token, its log lines at the client's level, and its server→client requests, asked of the client
 * if it can be asked (a per-session instance's roots otherwise come from the config).
 */

import type { Route } from "../resolve.js";
import { configRoots } from "../upstream/client.js";
import type { ForwardOptions } from "../upstream/forward.js";
import { errors } from "../wire/errors.js";
import type { Signal } from "../wire/signal.js";
import { missingCapability } from "./capability.js";
import { upstreamError } from "./errors.js";
import type { Params } from "./host.js";
import { passes } from "./peer.js";
import { type Call, clientOf, type SessionState } from "./state.js";

/**
 * What a call is forwarded with: the client's cancellation and key, and the call's own progress, log lines and
 * server→client requests as the forwarder hands them over (`envelope`: a 2026-07-28 upstream's). One shape for
 * every call (an option that does not apply is undefined), so the forwarder's reads of it stay monomorphic.
 */
export function forwardOptions(
  s: SessionState,
  route: Route,
  call: Call,
  token: unknown,
  envelope?: ForwardOptions["envelope"],
): ForwardOptions {
  return {
    signal: call.signal,
    client: clientOf(s, call),
    envelope,
    onProgress:
      token !== undefined
        ? (p: Params) =>
            call.notify({ method: "notifications/progress", params: { ...p, progressToken: token } })
        : undefined,
    onNotification: (n) => {
      if (n.method !== "notifications/message") return call.notify(n);
      const level = call.client.logLevel;
      if (level !== undefined && passes(n.params?.level, level)) call.notify(n);
    },
    onServerRequest: (request, signal) => askClient(s, request, signal, route.upstream, call),
  };
}

/**
 * A server→client request for this session's client: on the stream of `call` when it is tied to one, else on
 * the standalone stream. A client without the capability is not asked: the upstream gets -32601 at once.
 */
export async function askClient(
  s: SessionState,
  request: { method: string; params?: Params },
  signal: Signal,
  upstream: string,
  call?: Call,
): Promise<Params> {
  // A 2026-07-28 call is never sent a request: its bridge turns it into an input_required round (eras.ts).
  // Era branch 3 of 3: a client that may not be asked (2026-07-28) is reached only through its call's own ask
  // (an input_required round of its bridge), never sent a request.
  if (call && !call.client.codec.askable) return call.ask(request, signal);
  const capabilities = call ? call.client.capabilities : s.clientCapabilities;
  const needs = missingCapability(capabilities, request.method, request.params);
  if (needs && request.method === "roots/list") {
    // A per-session instance whose client has no roots gets the roots the config declares (maybe none).
    const spec = s.host.upstream(upstream);
    return { roots: spec ? configRoots(spec) : [] };
  }
  if (needs) {
    throw errors.clientLacks(request.method, needs, "session");
  }
  const id = (request.params as { elicitationId?: unknown } | undefined)?.elicitationId;
  if (request.method === "elicitation/create" && typeof id === "string") {
    s.host.traffic.elicited(s.ref(upstream), id, s);
  }
  try {
    return call ? await call.ask(request, signal) : await s.standalone(request, signal);
  } catch (err) {
    throw upstreamError(err, "client");
  }
}
