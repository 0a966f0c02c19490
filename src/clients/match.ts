/**
 * @module Which client profile a client gets: the first of the catalog's profiles whose name pattern, version
 * range and capabilities all match what the client says about itself (self-reported: a fit, never a grant).
 */
import { satisfies } from "../catalog/client-version.js";
import type { Catalog, ClientProfile } from "../catalog/types.js";

/** What a client says about itself: `clientInfo` of initialize, or of a 2026-07-28 request's `_meta`. */
export interface ClientSaid {
  readonly name?: unknown;
  readonly version?: unknown;
}

/** Longer names are no client's: matched against nothing (a hostile name costs no glob walk). */
export const MAX_CLIENT_NAME = 256;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Whether `capabilities` declares the dotted capability (present, and not null or false). */
function declares(capabilities: unknown, path: string): boolean {
  let at: unknown = capabilities;
  for (const key of path.split(".")) {
    if (!isRecord(at) || !Object.hasOwn(at, key)) return false;
    at = at[key];
  }
  return at !== undefined && at !== null && at !== false;
}

/** Whether one profile matches this client. */
function matches(profile: ClientProfile, info: ClientSaid | undefined, capabilities: unknown): boolean {
  const name = info?.name;
  if (typeof name !== "string" || name.length > MAX_CLIENT_NAME) return false;
  if (!profile.patterns.some((p) => p.test(name))) return false;
  if (profile.version) {
    const version = info?.version;
    if (typeof version !== "string" || !satisfies(profile.version.range, version)) return false;
  }
  for (const [path, wanted] of Object.entries(profile.capabilities ?? {}))
    if (declares(capabilities, path) !== wanted) return false;
  return true;
}

/** The first matching profile of the catalog, or undefined (a client that sends no name gets none). */
export function profileOf(
  catalog: Catalog,
  info: ClientSaid | undefined,
  capabilities?: unknown,
): ClientProfile | undefined {
  return catalog.clients.find((p) => matches(p, info, capabilities));
}
