/**
 * @module toolpacks' own tools as entries of the tool registry: list_server_toolsets (the /toolsets answer inside a
 * session), inspect_state (a slice of a captured value), find_tools and call_tool (the search over deferred
 * toolsets, SPEC §13). Each says when a resolution offers it, what it lists and what it does; the call path knows
 * none of them by name.
 */

import type { ToolsetsReport } from "../../report.js";
import type { Resolution } from "../../resolve.js";
import { offersSearchTool } from "../../search/deferred.js";
import {
  CALL_TOOL,
  callToolDef,
  callToolDefBeside,
  FIND_TOOLS,
  findToolsDef,
  findToolsDefBeside,
} from "../../search/tools.js";
import type { Selection } from "../../selection.js";
import { waitingToolsets } from "../authorization.js";
import { findTools, throughCallTool } from "../find-tools.js";
import { type HandleStore, INSPECT_TOOL, inspectToolDef } from "../handles.js";
import type { Params } from "../host.js";
import { offersInspect, offersToolsetsTool } from "../lists.js";
import type { SearchIndexes } from "../search-indexes.js";
import type { Call, SessionState } from "../state.js";
import { TOOLSETS_TOOL, toolsetsToolDef, toolsetsToolResult } from "../toolsets-tool.js";
import type { BuiltIn } from "./registry.js";

/** What a built-in tool is run with: the session, the request, and the params as the registry routed them. */
export interface BuiltInCall {
  readonly s: SessionState;
  readonly call: Call;
  readonly params: Params;
}

export interface BuiltInServices {
  /** Offer list_server_toolsets (`serve --no-toolsets-tool` turns it off). */
  readonly toolsetsTool: boolean;
  /** Sessions keep captured values: inspect_state is offered where capture applies. */
  readonly capture: boolean;
  readonly report: (selection: Selection, resolution: Resolution) => ToolsetsReport;
  readonly handles: HandleStore;
  readonly indexes: SearchIndexes;
}

/** The built-ins of a serving core, in the order tools/list shows them within their place. */
export function builtIns(services: BuiltInServices): BuiltIn<BuiltInCall>[] {
  return [
    {
      name: FIND_TOOLS,
      place: "search",
      viaCallTool: true,
      offered: (r) => offersSearchTool(r, FIND_TOOLS),
      definition: (_r, offered) => (offered.has(CALL_TOOL) ? findToolsDef : findToolsDefBeside),
      run: ({ s, params }) => findTools(services.indexes, s.resolution, params.arguments, waitingToolsets(s)),
    },
    {
      name: CALL_TOOL,
      place: "search",
      viaCallTool: false,
      offered: (r) => offersSearchTool(r, CALL_TOOL),
      definition: (_r, offered) => (offered.has(FIND_TOOLS) ? callToolDef : callToolDefBeside),
      // A tools/call of the tool it names: the same route, checks, capture, metrics and logs.
      names: throughCallTool,
    },
    {
      name: TOOLSETS_TOOL,
      place: "own",
      viaCallTool: true,
      offered: (r) => services.toolsetsTool && offersToolsetsTool(r),
      definition: () => toolsetsToolDef,
      run: ({ s, call }) => {
        const unknown = call.client.unknown;
        const selection = unknown ? { ...s.selection, unknown } : s.selection;
        return toolsetsToolResult(services.report(selection, s.resolution));
      },
    },
    {
      name: INSPECT_TOOL,
      place: "own",
      viaCallTool: true,
      offered: (r) => services.capture && offersInspect(r),
      definition: () => inspectToolDef,
      run: ({ s, params }) => services.handles.inspect(s.stateOwner, (params.arguments ?? {}) as Params),
    },
  ];
}
