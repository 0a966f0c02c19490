/** @module tools/call: the route, the built-in tools, handles, argument checks, the relay, capture, figures. */

import type { ToolDef } from "../catalog/inventory.js";
import type { Outcome } from "../metrics.js";
import { ErrorCode } from "../protocol.js";
import type { Resolution } from "../resolve.js";
import { listsUpstreamTool, offersSearchTool } from "../search/deferred.js";
import { CALL_TOOL, FIND_TOOLS } from "../search/tools.js";
import { authorizing, pendingAuthorization, waitingToolsets } from "./authorization.js";
import { rpcError } from "./errors.js";
import { findTools, throughCallTool } from "./find-tools.js";
import { INSPECT_TOOL, mentionsHandle } from "./handles.js";
import type { Params, SessionHost } from "./host.js";
import { offersInspect } from "./lists.js";
import { observeCall, outcomeOf } from "./observe.js";
import { relay } from "./relay.js";
import type { Call, SessionState } from "./state.js";
import { TOOLSETS_TOOL, toolsetsToolResult } from "./toolsets-tool.js";
import { checkArguments } from "./validate.js";

/** A call that meets "authorization required" may be made once more, after the person authorized. */
export function callTool(s: SessionState, params: Params, call: Call): Promise<Params> {
  return authorizing(s, call, () => callOnce(s, params, call));
}

async function callOnce(s: SessionState, params: Params, call: Call): Promise<Params> {
  const name = params.name;
  if (typeof name !== "string") throw rpcError(ErrorCode.InvalidParams, "tools/call needs a tool name");
  const host = s.host;
  // The name tools/list shows is the built-in's over a deferred upstream tool of that name (SPEC §13.1); the
  // tool call_tool names (`sentParams` set) is the upstream's, as find_tools returns it.
  const found = s.resolution.tool.get(name);
  const route =
    found && (call.sentParams || !builtIn(host, s.resolution, name) || listsUpstreamTool(s.resolution, name))
      ? found
      : undefined;
  if (!route) {
    if (name === TOOLSETS_TOOL && host.offersToolsetsTool(s.resolution)) {
      return toolsetsToolResult(host.report(s.selection, s.resolution));
    }
    if (name === INSPECT_TOOL && host.capture && offersInspect(s.resolution)) {
      return host.handles.inspect(s.stateOwner, (params.arguments ?? {}) as Params);
    }
    if (name === FIND_TOOLS && offersSearchTool(s.resolution, name))
      return findTools(host.searchIndexes, s.resolution, params.arguments, waitingToolsets(s));
    // call_tool is a tools/call of the tool it names: the same route, checks, capture, metrics and logs; a
    // 2026-07-28 requestState stays bound to the call_tool request the client sent (and retries).
    // A tool waiting for an authorization meets it here as in a direct call (the elicitation, or -32000).
    if (name === CALL_TOOL && !call.sentParams && offersSearchTool(s.resolution, name)) {
      const resolution = s.resolution;
      const inner = throughCallTool(params, (n) => {
        if (runs(host, resolution, n)) return true;
        const pending = pendingAuthorization(s, n);
        if (pending) throw pending;
        return false;
      });
      return callOnce(s, inner, { ...call, sentParams: params });
    }
    const pending = pendingAuthorization(s, name);
    if (pending) throw pending;
    throw rpcError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
  }
  // A handle stands for the value it names, for any tool of any upstream in this session. Only a call that
  // names one waits on the store.
  const args = mentionsHandle(params.arguments)
    ? await host.handles.substitute(s.stateOwner, route.definition as ToolDef, params.arguments)
    : params.arguments;
  if (host.upstream(route.upstream)?.validateArguments !== false) checkArguments(route, args);
  const started = performance.now();
  let outcome: Outcome = "error";
  try {
    const body = args === params.arguments ? params : { ...params, arguments: args };
    const result = await relay(s, route, "tools/call", body, call, true);
    outcome = result.isError === true ? "tool_error" : "ok";
    return host.capture && route.captureOverBytes !== undefined
      ? await host.handles.capture(s.stateOwner, route, result)
      : result;
  } catch (err) {
    outcome = outcomeOf(err, call.signal);
    throw err;
  } finally {
    observeCall(s, route, call, outcome, started, params.arguments);
  }
}

/**
 * A name call_tool runs in this session: an exposed tool (listed or deferred: an upstream tool named call_tool
 * is one), or a built-in it lists other than call_tool itself.
 */
function runs(host: SessionHost, resolution: Resolution, name: string): boolean {
  return resolution.tool.has(name) || (name !== CALL_TOOL && builtIn(host, resolution, name));
}

/** Whether the session lists a built-in tool of this name (none does when a listed upstream tool has it). */
function builtIn(host: SessionHost, resolution: Resolution, name: string): boolean {
  return (
    (name === TOOLSETS_TOOL && host.offersToolsetsTool(resolution)) ||
    (name === INSPECT_TOOL && host.capture && offersInspect(resolution)) ||
    offersSearchTool(resolution, name)
  );
}
