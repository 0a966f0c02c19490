/** @module What upstreams currently offer: the resolver's input, filled by the upstream pool. */

/** A tool definition exactly as the upstream listed it (unknown keys and `_meta` kept). */
export interface ToolDef {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema?: unknown;
  readonly [key: string]: unknown;
}

export type UpstreamState =
  | { readonly status: "ready"; readonly tools: readonly ToolDef[] }
  | { readonly status: "unavailable"; readonly reason: string };

/** By upstream name. An upstream absent from the map has not been started. */
export type Inventory = ReadonlyMap<string, UpstreamState>;
