/** @module The shapes of tool search: what is indexed, what a search returns, and the ranking's knobs. */

/** One deferred tool as the index sees it: its exposed definition and the toolset that offers it. */
export interface SearchEntry {
  /** The exposed name (what call_tool takes). */
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema?: unknown;
  /** The toolset that offers it. A tool two deferred toolsets share may be passed once per toolset. */
  readonly toolset: string;
  readonly toolsetTitle?: string;
  readonly toolsetDescription?: string;
}

/** A search hit: what a model needs to call the tool. */
export interface ToolHit {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: unknown;
  /** The toolset it was found in (the filter's, when one was given). */
  readonly toolset: string;
}

export interface SearchOptions {
  /** Hits to return, at least 1. */
  readonly limit: number;
  /** Only tools of this toolset. */
  readonly toolset?: string;
}

/** A deferred toolset of the session that waits for the caller to authorize its upstream (SPEC §11.7). */
export interface WaitingToolset {
  readonly toolset: string;
  readonly upstream: string;
  /** Where the caller authorizes it (for this caller only). */
  readonly url: string;
}

export interface SearchResult {
  readonly tools: readonly ToolHit[];
  /** Tools that matched, before the limit. */
  readonly total: number;
}

/** An immutable index over one resolution's deferred tools; shareable by every session of it. */
export interface ToolIndex {
  /** Distinct tools indexed. */
  readonly size: number;
  /**
   * Best matches first; equal scores in name order. A query with no searchable word (empty, or only
   * stop words) lists the tools in name order, `total` being all of them (in the toolset, if given).
   */
  search(query: string, options: SearchOptions): SearchResult;
}

/**
 * The indexed fields: the exposed name, title, the description's first sentence (summary) and the rest
 * (description), the parameters, and the toolset's name, title and description.
 */
export type SearchField = "name" | "title" | "summary" | "description" | "params" | "toolset";

/** How matches are weighed. {@link DEFAULT_RANKING} was tuned on the benchmark's tuning split only. */
export interface Ranking {
  /** A match in this field counts this many times a match in a field of boost 1. */
  readonly boost: Readonly<Record<SearchField, number>>;
  /** Query terms at least this long also match words they begin (0 turns prefix matching off). */
  readonly prefixMinLength: number;
  /** A prefix match counts this much of an exact one. */
  readonly prefixWeight: number;
  /** Query terms at least this long also match words one edit away (0 turns fuzzy matching off). */
  readonly fuzzyMinLength: number;
  /** A fuzzy match counts this much of an exact one. */
  readonly fuzzyWeight: number;
  /** A word the query gained by expansion (synonyms.ts) counts this much of a word typed. 0 turns expansion off. */
  readonly synonymWeight: number;
  /** The fields expansion words are looked for in. */
  readonly synonymFields: readonly SearchField[];
  /**
   * Each word of a tool's name (less its toolset's) that the query did not match divides its score by
   * `1 + nameWordPenalty × unmatched`: `reverse_geocode` ranks below `geocode` for "geocode this address". 0: off.
   */
  readonly nameWordPenalty: number;
  /** BM25+ parameters: term saturation k, length normalisation b, and the lower bound d. */
  readonly bm25: { readonly k: number; readonly b: number; readonly d: number };
}
