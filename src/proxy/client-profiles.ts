/**
 * @module The serving core's one door to client profiles (SPEC §14; the pure parts are src/clients/): the
 * profile of an `initialize` or a 2026-07-28 envelope, the selection with it, the resolution fitted to it,
 * `/toolsets?client=`, and the session's log fields. The core calls only what this file exports.
 */
import type { Catalog, ClientProfile } from "../catalog/types.js";
import { applyProfile } from "../clients/apply.js";
import { MAX_CLIENT_NAME, profileOf } from "../clients/match.js";
import { profileLog } from "../clients/report.js";
import { listFigure } from "../report.js";
import type { Resolution } from "../resolve.js";
import type { Selection, SelectionOptions } from "../selection.js";
import { ownToolDefs } from "./lists.js";

export { profileOf } from "../clients/match.js";
export { profileKey, selectFor } from "../clients/select.js";

/** What fitting needs of the gateway: its catalog, and what decides the tools it lists after a resolution's. */
export interface FitHost {
  readonly catalog: Catalog;
  readonly capture: boolean;
  offersToolsetsTool(resolution: Resolution): boolean;
}

/** The server's own tools after the resolution's (list_server_toolsets, inspect_state), as sessions list them. */
function ownTools(host: FitHost, resolution: Resolution) {
  return ownToolDefs(resolution, host.offersToolsetsTool(resolution), host.capture);
}

/** The deployment's selection options (`--toolsets`, `--ignore-query-key`), as `select` takes them. */
export function selectionOptions(o: {
  ignoreKeys?: readonly string[];
  defaultSelection?: string;
}): SelectionOptions {
  return {
    ...(o.ignoreKeys ? { ignoreKeys: o.ignoreKeys } : {}),
    ...(o.defaultSelection !== undefined ? { defaultSelection: o.defaultSelection } : {}),
  };
}

/** The resolution a session of `selection` is served: fitted to its client's profile (itself without one). */
export function fitted(host: FitHost, resolution: Resolution, selection: Selection): Resolution {
  return selection.profile
    ? applyProfile(host.catalog, resolution, selection, ownTools(host, resolution))
    : resolution;
}

/** The profile of a client by its `initialize` params (`clientInfo`, `capabilities`), replayed ones included. */
export function profileOfInit(
  catalog: Catalog,
  params: Record<string, unknown> | undefined,
): ClientProfile | undefined {
  if (!params) return undefined;
  return profileOf(catalog, params.clientInfo as { name?: unknown; version?: unknown }, params.capabilities);
}

/** The query keys `/toolsets` reads as the client it answers for, not as toolset names. */
const CLIENT_KEYS = new Set(["client", "client_version"]);

function decode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, " "));
  } catch {
    return s;
  }
}

/** `/toolsets?…&client=NAME&client_version=V`: the query without those keys, and that client's profile. */
export function clientQuery(catalog: Catalog, query: string): { query: string; profile?: ClientProfile } {
  const q = query.startsWith("?") ? query.slice(1) : query;
  const kept: string[] = [];
  const said: Record<string, string> = {};
  for (const part of q.split("&")) {
    const eq = part.indexOf("=");
    const key = decode(eq < 0 ? part : part.slice(0, eq));
    if (CLIENT_KEYS.has(key)) said[key] = decode(eq < 0 ? "" : part.slice(eq + 1));
    else if (part) kept.push(part);
  }
  if (said.client === undefined) return { query };
  const profile = profileOf(catalog, {
    name: said.client,
    ...(said.client_version !== undefined ? { version: said.client_version } : {}),
  });
  return { query: kept.join("&"), ...(profile ? { profile } : {}) };
}

/**
 * A session's `session opened` fields for its client (the name it sent, its profile, what the profile
 * deferred or cut, a cap still exceeded), and the warning to log when the list is over a cap even so.
 */
export function sessionLog(
  host: FitHost,
  selection: Selection,
  resolution: Resolution,
  clientName: unknown,
): { fields: Record<string, unknown>; warning?: string } {
  const name = typeof clientName === "string" ? clientName.slice(0, MAX_CLIENT_NAME) : undefined;
  const list = listFigure(resolution, ownTools(host, resolution));
  const { fields, warning } = profileLog(selection, resolution, list);
  return {
    fields: { ...(name !== undefined ? { client: name } : {}), ...fields },
    ...(warning ? { warning } : {}),
  };
}
