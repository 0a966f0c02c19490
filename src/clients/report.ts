/**
 * @module What reports and logs say about a client's profile: which one matched, its caps, what it deferred and
 * why, what it cut, and whether the list is still over a cap (the session opens anyway; this says so).
 */
import type { ClientProfile } from "../catalog/types.js";
import type { Resolution } from "../resolve.js";
import type { Selection } from "../selection.js";
import { overCaps } from "./plan.js";

/** The profile as `/toolsets`, `list_server_toolsets` and `toolsets --json` show it. */
export interface ProfileEntry {
  /** Its `clientInfo.name` patterns. */
  readonly client: readonly string[];
  /** `FILE:LINE:COL` of its entry, or `built-in`. */
  readonly from: string;
  /** A built-in profile's cap: where it is published. */
  readonly source?: string;
  readonly version?: string;
  readonly max_tools?: number;
  readonly max_list_bytes?: number;
  readonly defer: "auto" | "all" | "none";
  readonly selection?: string;
  readonly max_description_bytes?: number;
  /** With the upstreams asked: whether the list as served is within its caps. */
  readonly within_caps?: boolean;
  /** When it is not: which cap, and the list as served. */
  readonly over?: string;
  /** Listed tools whose description it cut (their whole text is found with find_tools). */
  readonly descriptions_cut?: number;
}

/** A toolset the profile deferred, and why. */
export interface ProfileDeferral {
  readonly name: string;
  readonly reason: string;
}

export interface ProfileFields {
  readonly client_profile?: ProfileEntry;
  readonly deferred_by_profile?: readonly ProfileDeferral[];
}

/** The caps a served list is over ("max_tools 40: 45 tools are listed"), empty when within or unknown. */
function overOf(profile: ClientProfile, list?: { tools: number; schema_bytes: number }): string[] {
  return list ? overCaps(profile, { tools: list.tools, bytes: list.schema_bytes }, "are") : [];
}

export function entryOf(profile: ClientProfile): ProfileEntry {
  return {
    client: profile.clients,
    from: profile.where,
    ...(profile.source ? { source: profile.source } : {}),
    ...(profile.version ? { version: profile.version.text } : {}),
    ...(profile.maxTools !== undefined ? { max_tools: profile.maxTools } : {}),
    ...(profile.maxListBytes !== undefined ? { max_list_bytes: profile.maxListBytes } : {}),
    defer: profile.defer,
    ...(profile.selection !== undefined ? { selection: profile.selection } : {}),
    ...(profile.maxDescriptionBytes !== undefined
      ? { max_description_bytes: profile.maxDescriptionBytes }
      : {}),
  };
}

/** The toolsets a resolution's profile deferred, each with the profile's reason. */
function deferredByProfile(resolution: Resolution): ProfileDeferral[] {
  const reason = resolution.profile?.reason ?? "";
  return resolution.deferred.filter((d) => d.by === "profile").map((d) => ({ name: d.name, reason }));
}

/**
 * The report's fields for a selection's profile: none without one; with a resolution and its served list
 * (`list`: the whole tools/list), also whether that list is within the caps and what was deferred or cut.
 */
export function profileFields(
  selection: Selection,
  resolution?: Resolution,
  list?: { tools: number; schema_bytes: number },
): ProfileFields {
  const profile = selection.profile;
  if (!profile) return {};
  const over = overOf(profile, list);
  const cut = resolution?.profile?.cut.length ?? 0;
  const deferred = resolution ? deferredByProfile(resolution) : [];
  return {
    client_profile: {
      ...entryOf(profile),
      ...(list ? { within_caps: over.length === 0 } : {}),
      ...(over.length ? { over: over.join("; ") } : {}),
      ...(cut ? { descriptions_cut: cut } : {}),
    },
    ...(deferred.length ? { deferred_by_profile: deferred } : {}),
  };
}

/**
 * A session's log fields for its profile (`client_profile`, `deferred_by_profile`, `over_caps`), and, when its
 * list is over a cap even so, the warning to log: the session is served, with what could not be deferred.
 */
export function profileLog(
  selection: Selection,
  resolution: Resolution,
  list: { tools: number; schema_bytes: number },
): { fields: Record<string, unknown>; warning?: string } {
  const profile = selection.profile;
  if (!profile) return { fields: {} };
  const over = overOf(profile, list);
  const deferred = deferredByProfile(resolution);
  const fields: Record<string, unknown> = {
    client_profile: `${profile.clients.join(", ")} (${profile.where})`,
    ...(deferred.length
      ? { deferred_by_profile: deferred.map((d) => d.name), profile_reason: resolution.profile?.reason }
      : {}),
    ...(resolution.profile?.cut.length ? { descriptions_cut: resolution.profile.cut.length } : {}),
    ...(over.length ? { over_caps: over.join("; ") } : {}),
  };
  return over.length
    ? {
        fields,
        warning:
          profile.defer === "none"
            ? "the session's tool list is over its client's caps, and its profile defers nothing (defer: none): served as it is"
            : "the session's tool list is over its client's caps even with every toolset the profile may defer deferred (always toolsets stay listed): served as it is",
      }
    : { fields };
}
