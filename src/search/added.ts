/**
 * @module The matches of the words a query gains by expansion, each searched by minisearch once per index
 * and kept. They come from the expansion table only, so they are few and fixed, and they are the commonest
 * words of a catalog (`get`, `list`, `create`): searched anew for every query, they were a third of the
 * postings a 5,000-tool search walks.
 */
import type MiniSearch from "minisearch";
import type { SearchOptions as MiniSearchOptions } from "minisearch";
import { EXPANSION_WORDS } from "./synonyms.js";

/** One tool an added word matches: its score as minisearch gives it for that word alone, and where it matched. */
export interface AddedMatch {
  readonly id: number;
  readonly score: number;
  readonly fields: readonly string[];
}

/**
 * What the added words contribute to one tool, summed in the query's order of them, as minisearch sums a
 * subquery's terms. Its `match` holds the kept (frozen) field lists: read it, never add to it.
 */
export interface AddedScore {
  score: number;
  readonly terms: string[];
  readonly match: Record<string, readonly string[]>;
}

export class AddedMatches {
  readonly #byWord = new Map<string, readonly AddedMatch[]>();

  /**
   * `options` are the search's own (boosts, BM25, exact terms), narrowed to the fields and weight of added
   * words: a word's matches are then what the same search gives it inside a whole query.
   */
  constructor(
    private readonly mini: MiniSearch<number>,
    private readonly options: MiniSearchOptions,
  ) {}

  /**
   * The tools `word` matches, searched once for this index, frozen, since every session that shares the index
   * reads them. Only the table's words are kept, so no query, however worded, makes this hold more than
   * {@link EXPANSION_WORDS} lists, each at most one match per tool. An index is never changed once built,
   * so a kept list never goes stale.
   */
  of(word: string): readonly AddedMatch[] {
    const kept = this.#byWord.get(word);
    if (kept) return kept;
    const matches = Object.freeze(
      this.mini
        .search(word, this.options)
        .map((r) =>
          Object.freeze({ id: r.id as number, score: r.score, fields: Object.freeze(r.match[word] ?? []) }),
        ),
    );
    if (EXPANSION_WORDS.has(word)) this.#byWord.set(word, matches);
    return matches;
  }

  /** Each tool the added words match, with the sum of their scores in the order given. */
  scores(words: readonly string[]): Map<number, AddedScore> {
    const byId = new Map<number, AddedScore>();
    for (const word of words) {
      for (const m of this.of(word)) {
        const seen = byId.get(m.id);
        if (seen) {
          seen.score += m.score;
          seen.terms.push(word);
          seen.match[word] = m.fields;
        } else byId.set(m.id, { score: m.score, terms: [word], match: { [word]: m.fields } });
      }
    }
    return byId;
  }

  /** The words whose matches are kept, and the matches kept across them. */
  get kept(): { words: number; matches: number } {
    let matches = 0;
    for (const m of this.#byWord.values()) matches += m.length;
    return { words: this.#byWord.size, matches };
  }
}
