/** @module `list_server_toolsets`: the /toolsets answer for a model inside a session. */
import type { ToolDef } from "../catalog/inventory.js";
import { HOW_TO_SELECT, type ToolsetsReport } from "../report.js";

export const TOOLSETS_TOOL = "list_server_toolsets";

export const toolsetsToolDef: ToolDef = Object.freeze({
  name: TOOLSETS_TOOL,
  title: "List server toolsets",
  description:
    "List the toolsets this server offers, which are active in this session, and how to select others (by reconnecting with a different URL).",
  inputSchema: { type: "object", properties: {}, additionalProperties: false },
  annotations: { readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
});

export function toolsetsToolResult(report: ToolsetsReport): Record<string, unknown> {
  const payload = { ...report, how_to_select: HOW_TO_SELECT };
  return { content: [{ type: "text", text: JSON.stringify(payload, null, 2) }], structuredContent: payload };
}
