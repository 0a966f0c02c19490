/** @module The one `/toolsets` payload: used by the HTTP route, the list_server_toolsets tool and `toolpacks toolsets --json`. */
import type { Catalog } from "./catalog/types.js";
import type { Reason, Resolution } from "./resolve.js";
import type { Selection } from "./selection.js";

export interface ToolsetEntry {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly default: boolean;
  readonly always: boolean;
  readonly active: boolean;
  /** Request headers its upstreams take credentials from (`forward_headers`, `header_env`); only when any. */
  readonly headers?: readonly string[];
}

export interface ToolsetsReport {
  readonly toolsets: readonly ToolsetEntry[];
  readonly active: readonly string[];
  /** Exposed tool names; present once upstreams were asked. */
  readonly tools?: readonly string[];
  readonly unknown: readonly string[];
  /** Requested toolsets that are not enabled, and why; present once upstreams were asked. */
  readonly unavailable?: readonly {
    name: string;
    reason: Reason;
    missing: readonly string[];
    detail: string;
  }[];
}

export const HOW_TO_SELECT =
  "Reconnect with the toolset in the URL: ?name adds it to the defaults, ?only=a,b asks for exactly those, ?without=name leaves one out.";

/**
 * Without a resolution the report says what the selection requests (no upstream asked);
 * with one, `active` is what is really enabled and `tools`/`unavailable` say the rest.
 */
export function toolsetsReport(
  catalog: Catalog,
  selection: Selection,
  resolution?: Resolution,
  extraTools: readonly string[] = [],
): ToolsetsReport {
  const active = resolution ? resolution.active : selection.active;
  const on = new Set(active);
  return {
    toolsets: catalog.toolsets.map((t) => {
      const headers = [
        ...new Set(
          t.upstreams.flatMap((u) => {
            const spec = catalog.upstreams.get(u);
            return spec ? [...spec.forwardHeaders, ...Object.keys(spec.headerEnv)] : [];
          }),
        ),
      ];
      return {
        name: t.name,
        title: t.title,
        description: t.description,
        default: t.default,
        always: t.always,
        active: on.has(t.name),
        ...(headers.length ? { headers } : {}),
      };
    }),
    active,
    ...(resolution ? { tools: [...resolution.tools.map((r) => r.name), ...extraTools] } : {}),
    unknown: selection.unknown,
    ...(resolution
      ? {
          unavailable: resolution.unavailable.map((u) => ({
            name: u.name,
            reason: u.reason,
            missing: u.missing,
            detail: u.detail,
          })),
        }
      : {}),
  };
}
