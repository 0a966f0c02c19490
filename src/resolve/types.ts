/** @module What a resolution is made of: routes to exposed items, and toolsets that could not be enabled. */
import type { MemberKind } from "../catalog/types.js";

/** An item's definition as its upstream lists it: passed on loose, unknown fields included. */
export type Def = { readonly [key: string]: unknown };

/** One exposed item: the name (or URI) a client uses and where the request goes. */
export interface Route<D extends Def = Def> {
  readonly kind: MemberKind;
  /** Exposed tool/prompt name, or the resource URI / URI template. */
  readonly name: string;
  readonly upstream: string;
  /** The upstream's own name (or URI). */
  readonly original: string;
  /** The toolsets that expose it (an item two packs share belongs to both). */
  readonly toolsets: readonly string[];
  /** The upstream's definition with the exposed name and overrides applied. */
  readonly definition: D;
  /** A resource template (uriTemplate) rather than a resource. */
  readonly template?: boolean;
  /** Tool results over this many bytes are kept in the session and passed by handle. */
  readonly captureOverBytes?: number;
  /**
   * The definition before a client profile cut its description (`definition` is what is listed): what
   * find_tools indexes and returns. Only on a tool whose description was cut.
   */
  readonly fullDefinition?: D;
}

/**
 * `forbidden`: the principal does not meet the toolset's `requires:` (never retried: a new token is needed).
 * `authorization_required`: a per-user OAuth upstream has no grant for this principal yet (SPEC §11.7).
 */
export type Reason = "missing" | "upstream-unavailable" | "conflict" | "forbidden" | "authorization_required";

export interface Unavailable {
  readonly name: string;
  readonly reason: Reason;
  /** Member refs that match nothing (reason "missing"). */
  readonly missing: readonly string[];
  /** Human-readable: which upstream is down and why, or which names collide. */
  readonly detail: string;
  /** The upstreams involved, for the gate and for logs. */
  readonly upstreams: readonly string[];
  /** `authorization_required`: where the principal authorizes (the first upstream that waits for it). */
  readonly url?: string;
}

/** An active toolset whose tools are found with find_tools instead of listed, and why. */
export interface DeferredToolset {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  /**
   * `config`: `deferred: true`; `url`: `defer=`; `auto`: `search.auto_over_tokens` was exceeded; `profile`:
   * the client's profile (its caps, or `defer: all`).
   */
  readonly by: "config" | "url" | "auto" | "profile";
}

/** What a client profile changed in a resolution (clients/apply.ts). */
interface ProfileEffect {
  /** Why it deferred toolsets (`by: "profile"` in `deferred`): the cap and what the list would have been. */
  readonly reason?: string;
  /** Listed tools whose description it cut, in list order: find_tools finds them too, whole. */
  readonly cut: readonly string[];
  /** The toolsets those tools are indexed under (the active ones that list them), catalog order. */
  readonly cutIn: readonly { readonly name: string; readonly title: string; readonly description: string }[];
}

/** A URI pattern a read, subscription or completion may be routed by (templates and resource globs). */
export interface UriRoute {
  readonly upstream: string;
  readonly regex: RegExp;
}

export interface Resolution {
  /** The selection's canonical key. */
  readonly key: string;
  /** Requested toolsets, catalog order. */
  readonly requested: readonly string[];
  /** Requested toolsets that are enabled: every member satisfied, upstreams up, no collision. */
  readonly active: readonly string[];
  readonly unavailable: readonly Unavailable[];
  readonly tools: readonly Route[];
  readonly tool: ReadonlyMap<string, Route>;
  readonly prompts: readonly Route[];
  readonly prompt: ReadonlyMap<string, Route>;
  /** Resources and templates, in one list (templates carry `template: true`). */
  readonly resources: readonly Route[];
  /** By URI or URI template. */
  readonly resource: ReadonlyMap<string, Route>;
  /** Patterns that route URIs not listed verbatim (template instances, resource globs). */
  readonly uriRoutes: readonly UriRoute[];
  /** Active toolsets whose tools are not listed but found with find_tools, catalog order. */
  readonly deferred: readonly DeferredToolset[];
  /** The upstreams of the active toolsets. */
  readonly upstreams: readonly string[];
  readonly instructions?: string;
  readonly unknown: readonly string[];
  /** Present when the selection's client profile deferred toolsets or cut descriptions. */
  readonly profile?: ProfileEffect;
}
