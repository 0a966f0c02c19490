/** @module A compiled client profile: a type only, so the selection (bundled into the console's page too) can name it. */
import type { VersionRange } from "./client-version.js";

/**
 * A client profile (`clients:` or built in): which clients it matches by what they say about themselves, and
 * what they get. The first profile that matches a client is its profile.
 */
export interface ClientProfile {
  /** `clientInfo.name` patterns as written (exact or glob). */
  readonly clients: readonly string[];
  /** The same, compiled: anchored, case-insensitive. */
  readonly patterns: readonly RegExp[];
  /** A range of `clientInfo.version`, as written and parsed. */
  readonly version?: { readonly text: string; readonly range: VersionRange };
  /** Capability (dotted path) → must be declared (true) or must not (false). */
  readonly capabilities?: Readonly<Record<string, boolean>>;
  readonly maxTools?: number;
  readonly maxListBytes?: number;
  readonly defer: "auto" | "all" | "none";
  /** What a URL naming no toolset gets for this client, in URL spelling. */
  readonly selection?: string;
  readonly maxDescriptionBytes?: number;
  /** `file:line:col` of the entry, or `built-in`. */
  readonly where: string;
  /** A built-in profile's cap: where the client's makers publish it. */
  readonly source?: string;
}
