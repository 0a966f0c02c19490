/**
 * @module tools/call, as one pipeline of named stages: **authorize** (a call that meets "authorization required"
 * is asked for it and made once more), **route** (the registry says what the name runs: an upstream tool, or a
 * built-in), then for an upstream tool **handles in** (an `@state:` argument stands for its value), **validate**
 * (the arguments against the tool's inputSchema), **relay** (to the route's instance, by the era bridge its
 * client and upstream need), **capture** (a large result kept out of the model's context), and **observe**
 * (metrics, the log line, the audit line) around them.
 */
import type { ToolDef } from "../../catalog/inventory.js";
import type { Outcome } from "../../metrics.js";
import type { Route } from "../../resolve.js";
import { CALL_TOOL, FIND_TOOLS } from "../../search/tools.js";
import { errors } from "../../wire/errors.js";
import { authorizing, pendingAuthorization } from "../authorization.js";
import { mentionsHandle } from "../handles.js";
import type { Params } from "../host.js";
import { observeCall, outcomeOf } from "../observe.js";
import { relay } from "../relay.js";
import type { Call, SessionState } from "../state.js";
import { checkArguments } from "../validate.js";
import type { ToolEntry } from "./registry.js";

/** tools/call: authorize around the rest, which may run once more after the person authorized. */
export function callTool(s: SessionState, params: Params, call: Call): Promise<Params> {
  return authorizing(s, call, () => runTool(s, params, call));
}

/** The stages after authorize (call_tool runs the tool it names through them: its own call is authorized). */
export async function runTool(s: SessionState, params: Params, call: Call): Promise<Params> {
  const entry = route(s, params, call);
  if ("builtIn" in entry) return entry.builtIn.run({ s, call, params });
  return upstreamTool(s, entry.route, params, call);
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

async function upstreamTool(s: SessionState, route: Route, params: Params, call: Call): Promise<Params> {
  const { host } = s;
  // handles in: only a call that names one waits on the store.
  const args = mentionsHandle(params.arguments)
    ? await host.handles.substitute(s.stateOwner, route.definition as ToolDef, params.arguments)
    : params.arguments;
  // validate
  if (host.upstream(route.upstream)?.validateArguments !== false) checkArguments(route, args);
  const started = performance.now();
  let outcome: Outcome = "error";
  try {
    // relay
    const body = args === params.arguments ? params : { ...params, arguments: args };
    const result = await relay(s, route, "tools/call", body, call, true);
    outcome = result.isError === true ? "tool_error" : "ok";
    // capture
    return host.capture && route.captureOverBytes !== undefined
      ? await host.handles.capture(s.stateOwner, route, result)
      : result;
  } catch (err) {
    outcome = outcomeOf(err, call.signal);
    throw err;
  } finally {
    // observe
    observeCall(s, route, call, outcome, started, params.arguments);
  }
}
