/** @module tools/call: the route, the built-in tools, handles, argument checks, the relay, capture, figures. */

import type { ToolDef } from "../catalog/inventory.js";
import type { Outcome } from "../metrics.js";
import { ErrorCode } from "../protocol.js";
import { rpcError } from "./errors.js";
import { INSPECT_TOOL } from "./handles.js";
import type { Params } from "./host.js";
import { offersInspect } from "./lists.js";
import { observeCall, outcomeOf } from "./observe.js";
import { relay } from "./relay.js";
import type { Call, SessionState } from "./state.js";
import { TOOLSETS_TOOL, toolsetsToolResult } from "./toolsets-tool.js";
import { checkArguments } from "./validate.js";

export async function callTool(s: SessionState, params: Params, call: Call): Promise<Params> {
  const name = params.name;
  if (typeof name !== "string") throw rpcError(ErrorCode.InvalidParams, "tools/call needs a tool name");
  const host = s.host;
  const route = s.resolution.tool.get(name);
  if (!route) {
    if (name === TOOLSETS_TOOL && host.offersToolsetsTool(s.resolution)) {
      return toolsetsToolResult(host.report(s.selection, s.resolution));
    }
    if (name === INSPECT_TOOL && host.capture && offersInspect(s.resolution)) {
      return s.handles.inspect((params.arguments ?? {}) as Params);
    }
    throw rpcError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
  }
  // A handle stands for the value it names, for any tool of any upstream in this session.
  const args = s.handles.substitute(route.definition as ToolDef, params.arguments);
  if (host.upstream(route.upstream)?.validateArguments !== false) checkArguments(route, args);
  const started = performance.now();
  let outcome: Outcome = "error";
  try {
    const body = args === params.arguments ? params : { ...params, arguments: args };
    const result = await relay(s, route, "tools/call", body, call, true);
    outcome = result.isError === true ? "tool_error" : "ok";
    return host.capture ? s.handles.capture(route, result) : result;
  } catch (err) {
    outcome = outcomeOf(err, call.signal);
    throw err;
  } finally {
    observeCall(host, route, call, outcome, started, s.digest);
  }
}
