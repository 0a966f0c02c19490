/** @module What upstreams currently offer: the resolver's input, filled by the upstream pool. */

/** A definition exactly as the upstream listed it (unknown keys and `_meta` kept). */
export interface ToolDef {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema?: unknown;
  readonly [key: string]: unknown;
}
interface PromptDef {
  readonly name: string;
  readonly [key: string]: unknown;
}
interface ResourceDef {
  readonly uri: string;
  readonly [key: string]: unknown;
}
interface TemplateDef {
  readonly uriTemplate: string;
  readonly [key: string]: unknown;
}

/** How long a list may be reused, as a 2026-07-28 upstream said it (server/utilities/caching). */
export interface ListHint {
  readonly ttlMs: number;
  readonly cacheScope: "public" | "private";
}

export interface Offer {
  readonly tools: readonly ToolDef[];
  readonly prompts: readonly PromptDef[];
  readonly resources: readonly ResourceDef[];
  readonly templates: readonly TemplateDef[];
  /** The cache hints of a 2026-07-28 upstream's lists (absent for a 2025 one). */
  readonly hints?: Readonly<Partial<Record<"tools" | "prompts" | "resources" | "templates", ListHint>>>;
}

export type UpstreamState =
  | ({ readonly status: "ready" } & Offer)
  | {
      readonly status: "unavailable";
      readonly reason: string;
      /** The upstream refuses until a person authorizes toolpacks (OAuth): where that person goes. */
      readonly authorizeUrl?: string;
    };

/** By upstream name. An upstream absent from the map has not been started. */
export type Inventory = ReadonlyMap<string, UpstreamState>;

export const EMPTY_OFFER: Offer = Object.freeze({ tools: [], prompts: [], resources: [], templates: [] });
