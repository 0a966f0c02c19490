/** @module One find_tools query as minisearch runs it: the typed terms, the words expansion adds, and how matches are counted. */
import type { QueryCombination } from "minisearch";
import { expansions } from "./synonyms.js";
import { queryStopWords, queryTerms } from "./tokenize.js";
import type { Ranking } from "./types.js";

/** A query's distinct terms past this many are ignored: a pasted page must not cost a pasted page's time. */
const MAX_QUERY_TERMS = 32;

export interface QueryPlan {
  /** The typed terms, normalised, distinct, at most {@link MAX_QUERY_TERMS}. */
  readonly typed: readonly string[];
  /** What minisearch runs: the typed terms, each also as a prefix from `prefixMinLength` letters. */
  readonly typedQuery: QueryCombination;
  /**
   * The words expansion adds, none typed, in the table's order: each is matched exactly, only in
   * `synonymFields`, at `synonymWeight` (see `AddedMatches`).
   */
  readonly added: readonly string[];
  /**
   * How many of the words the user wrote a result matched, given the query terms minisearch says it matched:
   * a typed term counts once, and an added term counts as the word it came from (once, however many of that
   * word's expansions matched).
   */
  matchedWords(terms: readonly string[]): number;
}

/** The plan of a query, or undefined when it has no searchable word. */
export function planQuery(query: string, ranking: Ranking): QueryPlan | undefined {
  const typed = [...new Set(queryTerms(query))].slice(0, MAX_QUERY_TERMS);
  if (typed.length === 0) return undefined;
  const typedSet = new Set(typed);
  const added =
    ranking.synonymWeight > 0
      ? expansions([...typed, ...new Set(queryStopWords(query))], typedSet)
      : new Map<string, string[]>();
  const typedQuery: QueryCombination = {
    queries: [typed.join(" ")],
    combineWith: "OR",
    prefix: (term: string) => ranking.prefixMinLength > 0 && term.length >= ranking.prefixMinLength,
    fuzzy: (term: string) =>
      ranking.fuzzyMinLength > 0 && term.length >= ranking.fuzzyMinLength ? 1 : false,
  };
  return {
    typed,
    typedQuery,
    added: [...added.keys()],
    matchedWords(terms) {
      let words = 0;
      const from: string[] = [];
      for (const t of terms) {
        const sources = added.get(t);
        if (!sources) words++;
        else for (const w of sources) if (!terms.includes(w) && !from.includes(w)) from.push(w);
      }
      return words + from.length;
    },
  };
}
