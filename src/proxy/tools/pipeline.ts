/**
 * @module tools/call, as one pipeline of named stages: **authorize** (a call that meets "authorization required"
 * is asked for it and made once more), **route** (the registry says what the name runs: an upstream tool, or a
 * built-in), then for an upstream tool **handles in** (an `@state:` argument stands for its value), **validate**
 * (the arguments against the tool's inputSchema), **relay** (to the route's instance, by the era bridge its
 * client and upstream need), **capture** (a large result kept out of the model's context), and **observe**
 * (metrics, the log line, the audit line) around them: once per attempt, whichever stage ends it (a refusal too).
 */

import type { Refusal } from "../../audit.js";
import type { ToolDef } from "../../catalog/inventory.js";
import type { Route } from "../../resolve.js";
import { CALL_TOOL, FIND_TOOLS } from "../../search/tools.js";
import { AuthorizationRequiredError } from "../../upstream/http-auth.js";
import { CODE, codeOf, errors } from "../../wire/errors.js";
import { authorizing, pendingAuthorization } from "../authorization.js";
import { mentionsHandle } from "../handles.js";
import type { Params } from "../host.js";
import { type Ending, observe, outcomeOf } from "../observe.js";
import { relay } from "../relay.js";
import type { Call, SessionState } from "../state.js";
import { checkArguments } from "../validate.js";
import type { ToolEntry } from "./registry.js";

/** tools/call: authorize around the rest, which may run once more after the person authorized. */
export function callTool(s: SessionState, params: Params, call: Call): Promise<Params> {
  return authorizing(s, call, () => runTool(s, params, call));
}

/**
 * The stages after authorize (call_tool runs the tool it names through them: its own call is authorized), each
 * attempt observed once whichever stage ends it: a refusal (a name the session has not, a bad handle, arguments
 * the schema refuses) is observed as well as a call that ran.
 */
async function runTool(s: SessionState, params: Params, call: Call): Promise<Params> {
  const at: Attempt = { stage: "route", started: performance.now(), isError: false };
  let ending: Ending = { outcome: "error" };
  try {
    const result = await stages(s, params, call, at);
    ending = { outcome: at.isError ? "tool_error" : "ok" };
    return result;
  } catch (err) {
    const reason = refusal(at.stage, err);
    ending = reason ? { outcome: "refused", reason } : { outcome: outcomeOf(err, call.signal) };
    throw err;
  } finally {
    // observe (call_tool as the tool it names, once it names one)
    if (!at.handedOver) {
      const route = at.entry && "route" in at.entry ? at.entry.route : undefined;
      observe(s, call, {
        method: "tools/call",
        name: params.name,
        route,
        toolset: route?.toolsets[0],
        ending,
        started: at.started,
        args: params.arguments,
      });
    }
  }
}

/** Where an attempt stands: the stage it is in, what route found, and whether the result is a tool error. */
interface Attempt {
  stage: "route" | "handles in" | "validate" | "relay" | "capture" | "built-in";
  readonly started: number;
  entry?: ToolEntry;
  isError: boolean;
  /** call_tool handed the call to the tool it names: that attempt is observed, not this one. */
  handedOver?: true;
}

/** Route, then the built-in or the upstream tool's stages (a refusal of route is thrown as it is: runTool catches it). */
function stages(s: SessionState, params: Params, call: Call, at: Attempt): Promise<Params> {
  const entry = route(s, params, call);
  at.entry = entry;
  if ("builtIn" in entry) {
    at.stage = "built-in";
    const b = entry.builtIn;
    if ("names" in b) {
      const named = b.names(params);
      // Observed as the tool it names; a 2026-07-28 requestState stays bound to the request the client sent.
      at.handedOver = true;
      return runTool(s, named, { ...call, sentParams: params });
    }
    return builtIn(b, s, params, call, at);
  }
  return upstreamTool(s, entry.route, params, call, at);
}

/** A built-in tool that runs (find_tools, list_server_toolsets, inspect_state): its result, or what it threw. */
async function builtIn(
  b: { run(c: { s: SessionState; call: Call; params: Params }): Promise<Params> | Params },
  s: SessionState,
  params: Params,
  call: Call,
  at: Attempt,
): Promise<Params> {
  const result = await b.run({ s, call, params });
  at.isError = result.isError === true;
  return result;
}

/**
 * A stage that refuses before anything ran, and why: what route refuses (a name the session has not, or waits for
 * authorization), and the invalid params of handles in, validate or a built-in. Anything else ran (or failed).
 */
function refusal(stage: Attempt["stage"], err: unknown): Refusal | undefined {
  if (stage === "route")
    return err instanceof AuthorizationRequiredError ? "authorization_required" : "unknown_tool";
  if (codeOf(err) !== CODE.invalidParams) return undefined;
  if (stage === "handles in") return "bad_handle";
  if (stage === "validate") return "invalid_arguments";
  if (stage === "built-in")
    return (err as { data?: { handle?: unknown } }).data?.handle !== undefined
      ? "bad_handle"
      : "invalid_arguments";
  return undefined;
}

/**
 * What the name runs in this session: `call_tool {name}` (`sentParams` set) an upstream tool before a built-in,
 * a direct call the name tools/list shows. A tool that is off only while its upstream waits for this caller's
 * authorization meets that, not "Unknown tool".
 */
function route(s: SessionState, params: Params, call: Call): ToolEntry {
  const name = params.name;
  if (typeof name !== "string") throw errors.noToolName();
  const tools = s.host.tools.of(s.resolution);
  const entry = call.sentParams ? tools.through(name) : tools.direct(name);
  if (entry) return entry;
  const pending = pendingAuthorization(s, name);
  if (pending) throw pending;
  if (call.sentParams)
    throw errors.unknown(
      "tool",
      `${name} (${CALL_TOOL} runs a tool of this session; search with ${FIND_TOOLS} for its exact name)`,
    );
  throw errors.unknown("tool", name);
}

async function upstreamTool(
  s: SessionState,
  route: Route,
  params: Params,
  call: Call,
  at: Attempt,
): Promise<Params> {
  const { host } = s;
  // handles in: only a call that names one waits on the store.
  at.stage = "handles in";
  const args = mentionsHandle(params.arguments)
    ? await host.handles.substitute(s.stateOwner, route.definition as ToolDef, params.arguments)
    : params.arguments;
  // validate
  at.stage = "validate";
  if (host.upstream(route.upstream)?.validateArguments !== false) checkArguments(route, args);
  // relay
  at.stage = "relay";
  const body = args === params.arguments ? params : { ...params, arguments: args };
  const result = await relay(s, route, "tools/call", body, call, true);
  at.isError = result.isError === true;
  // capture
  at.stage = "capture";
  return host.capture && route.captureOverBytes !== undefined
    ? await host.handles.capture(s.stateOwner, route, result)
    : result;
}
