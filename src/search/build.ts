/**
 * @module `buildIndex`: one BM25 index (minisearch) over a resolution's deferred tools, never changed once
 * built; its only state is what the expansion words matched (`AddedMatches`), which changes no answer.
 */
import MiniSearch from "minisearch";
import { AddedMatches } from "./added.js";
import { nameWords, unmatchedNameWords } from "./names.js";
import { planQuery, type QueryPlan } from "./query.js";
import { normalize, tokenize } from "./tokenize.js";
import type {
  Ranking,
  SearchEntry,
  SearchField,
  SearchOptions,
  SearchResult,
  ToolHit,
  ToolIndex,
} from "./types.js";

/** Tuned on bench/data/queries.json's tuning split (bench/search/tune.mjs); see bench/search/README.md. */
export const DEFAULT_RANKING: Ranking = Object.freeze({
  boost: Object.freeze({ name: 3, title: 1, summary: 5, description: 0.5, params: 0.3, toolset: 4 }),
  prefixMinLength: 4,
  prefixWeight: 0.3,
  // Off: on the tuning split it found nothing exact and prefix matching missed, and it costs time.
  fuzzyMinLength: 0,
  fuzzyWeight: 0.2,
  synonymWeight: 0.6,
  synonymFields: Object.freeze(["name", "title", "summary"] as const),
  // Each name word the query leaves unmatched divides a score by 1 + 0.3 × that count: 0.3–0.5 a plateau.
  nameWordPenalty: 0.3,
  bm25: Object.freeze({ k: 2, b: 0.9, d: 0.5 }),
});

const FIELDS: readonly SearchField[] = ["name", "title", "summary", "description", "params", "toolset"];
const EMPTY_SCHEMA = Object.freeze({ type: "object" });

/** One distinct tool: its first entry, and every toolset that offers it. */
interface Doc {
  readonly entry: SearchEntry;
  readonly toolsets: string[];
  readonly fields: Record<SearchField, string>;
  /** The name's words that say what it does (see {@link nameWords}). */
  readonly nameWords: readonly string[];
}

/**
 * Builds the index once; it is never changed after, answers the same for its whole life, and is safe to
 * share. Entries with the same name are one tool offered by several toolsets (their definitions are the
 * exposed one, so the first is kept).
 */
export function buildIndex(entries: readonly SearchEntry[], ranking: Ranking = DEFAULT_RANKING): ToolIndex {
  const built = prepare(entries, ranking);
  built.mini.addAll(built.ids);
  return built.index;
}

/** Tools indexed between two turns of the event loop by {@link buildIndexAsync}. */
export const BUILD_CHUNK = 100;

/**
 * The same index, built {@link BUILD_CHUNK} tools at a time with the event loop free in between: a large
 * catalog's first search must not stall every other session of the process while it is indexed.
 */
export async function buildIndexAsync(
  entries: readonly SearchEntry[],
  ranking: Ranking = DEFAULT_RANKING,
): Promise<ToolIndex> {
  const built = prepare(entries, ranking);
  await built.mini.addAllAsync(built.ids, { chunkSize: BUILD_CHUNK });
  return built.index;
}

/** The documents, an empty minisearch over them, and the index that searches it once they are added. */
function prepare(
  entries: readonly SearchEntry[],
  ranking: Ranking,
): { mini: MiniSearch<number>; ids: number[]; index: ToolIndex } {
  const docs: Doc[] = [];
  const byName = new Map<string, Doc>();
  for (const entry of entries) {
    const seen = byName.get(entry.name);
    if (seen) {
      if (!seen.toolsets.includes(entry.toolset)) {
        seen.toolsets.push(entry.toolset);
        seen.fields.toolset += `\n${toolsetText(entry)}`;
      }
      continue;
    }
    const doc: Doc = {
      entry,
      toolsets: [entry.toolset],
      fields: {
        name: entry.name,
        title: entry.title ?? "",
        ...splitDescription(entry.description ?? ""),
        params: paramsText(entry.inputSchema),
        toolset: toolsetText(entry),
      },
      nameWords: nameWords(entry.name, entry.toolset),
    };
    byName.set(entry.name, doc);
    docs.push(doc);
  }
  const mini = new MiniSearch<number>({
    fields: [...FIELDS],
    idField: "id",
    extractField: (id, field) => (field === "id" ? id : docs[id]?.fields[field as SearchField]),
    tokenize,
    processTerm: normalize,
  });
  const byNameOrder = docs.map((_, i) => i).sort((a, b) => compareNames(docs[a]!, docs[b]!));
  // Words a query gains by expansion count less, match only exactly, and only in the fields that say what a
  // tool does: cheaper, and a synonym in a long usage note is noise.
  const addedMatches = new AddedMatches(mini, {
    ...searchOptions(ranking),
    fields: [...ranking.synonymFields],
    boostTerm: () => ranking.synonymWeight,
  });
  const index = Object.freeze({
    size: docs.length,
    search: (query: string, options: SearchOptions) =>
      search(mini, docs, byNameOrder, ranking, addedMatches, query, options),
  });
  return { mini, ids: docs.map((_, i) => i), index };
}

/** A match being ranked: minisearch's result for the typed terms, or a tool only an added word matched. */
interface Scored {
  readonly id: number;
  score: number;
  readonly match: Readonly<Record<string, readonly string[]>>;
}

/** How minisearch searches this index: terms arrive normalised, so it only splits them back apart. */
function searchOptions(ranking: Ranking) {
  return {
    tokenize: (text: string) => text.split(" "),
    processTerm: (term: string) => term,
    boost: { ...ranking.boost },
    bm25: { ...ranking.bm25 },
    weights: { prefix: ranking.prefixWeight, fuzzy: ranking.fuzzyWeight },
  };
}

/** A summed score times the number of the user's words it matched (an added word counts as its source). */
function rescore(score: number, terms: readonly string[], plan: QueryPlan): number {
  return terms.length > 1 ? score * plan.matchedWords(terms) : score;
}

function search(
  mini: MiniSearch<number>,
  docs: readonly Doc[],
  byNameOrder: readonly number[],
  ranking: Ranking,
  addedMatches: AddedMatches,
  query: string,
  { limit, toolset }: SearchOptions,
): SearchResult {
  const inToolset = (id: number) => toolset === undefined || docs[id]!.toolsets.includes(toolset);
  const max = Math.max(1, Math.floor(limit));
  const plan = planQuery(query, ranking);
  if (!plan) {
    const ids = byNameOrder.filter(inToolset);
    return freezeResult(
      ids.slice(0, max).map((id) => hit(docs[id]!, toolset)),
      ids.length,
    );
  }
  const inSearch = toolset === undefined ? undefined : (r: { id: unknown }) => inToolset(r.id as number);
  const typed = mini.search(plan.typedQuery, { ...searchOptions(ranking), filter: inSearch });
  const added = plan.added.length > 0 ? addedMatches.scores(plan.added) : undefined;
  // minisearch multiplies a result's score by the number of query terms it matched; the user wrote words,
  // and the several words one of them expands to must not count as several words matched. The added words'
  // sum joins the typed terms' as it would inside one minisearch query (typed, then added).
  const results: Scored[] = [];
  for (const r of typed) {
    let score = r.score / r.queryTerms.length;
    const extra = added?.get(r.id);
    if (extra) {
      added!.delete(r.id);
      r.queryTerms.push(...extra.terms); // never typed words (planQuery), so none is there already
      Object.assign(r.match, extra.match);
      score += extra.score;
    }
    r.score = rescore(score, r.queryTerms, plan);
    results.push(r);
  }
  if (added) {
    for (const [id, extra] of added) {
      if (!inToolset(id)) continue;
      results.push({ id, score: rescore(extra.score, extra.terms, plan), match: extra.match });
    }
  }
  // The name-word penalty only lowers a score, so it is worked out only for a result that could still enter
  // the top `max` before it: most of a large catalog's ~1,600 matches never need it.
  const penalty = ranking.nameWordPenalty;
  const penalised =
    penalty > 0
      ? (r: Scored) => {
          const unmatched = unmatchedNameWords(docs[r.id]!.nameWords, r.match);
          if (unmatched > 0) r.score /= 1 + penalty * unmatched;
        }
      : undefined;
  return freezeResult(
    top(results, max, docs, penalised).map((r) => hit(docs[r.id]!, toolset)),
    results.length,
  );
}

/**
 * The first `max` results by score, equal scores by name (code-unit order): one pass, no sort of them all.
 * `lower`, when given, lowers a result's score (never raises it) before it is compared, once it could enter.
 */
function top<R extends { id: number; score: number }>(
  results: readonly R[],
  max: number,
  docs: readonly Doc[],
  lower?: (r: R) => void,
): R[] {
  const better = (a: R, b: R) =>
    a.score > b.score || (a.score === b.score && compareNames(docs[a.id]!, docs[b.id]!) < 0);
  const kept: R[] = [];
  for (const r of results) {
    if (kept.length === max && !better(r, kept[max - 1]!)) continue;
    if (lower) {
      lower(r);
      if (kept.length === max && !better(r, kept[max - 1]!)) continue;
    }
    let i = kept.length < max ? kept.length : max - 1;
    while (i > 0 && better(r, kept[i - 1]!)) {
      kept[i] = kept[i - 1]!;
      i--;
    }
    kept[i] = r;
  }
  return kept;
}

function hit(doc: Doc, toolset: string | undefined): ToolHit {
  const { name, title, description, inputSchema } = doc.entry;
  return Object.freeze({
    name,
    ...(title === undefined ? {} : { title }),
    ...(description === undefined ? {} : { description }),
    inputSchema: inputSchema ?? EMPTY_SCHEMA,
    toolset: toolset ?? doc.toolsets[0]!,
  });
}

function freezeResult(tools: ToolHit[], total: number): SearchResult {
  return Object.freeze({ tools: Object.freeze(tools), total });
}

/** Code-unit order: the same everywhere, unlike localeCompare. */
function compareNames(a: Doc, b: Doc): number {
  return a.entry.name < b.entry.name ? -1 : a.entry.name > b.entry.name ? 1 : 0;
}

function toolsetText(entry: SearchEntry): string {
  return [entry.toolset, entry.toolsetTitle, entry.toolsetDescription].filter(Boolean).join("\n");
}

/**
 * A description's first sentence says what the tool does; the rest is usage advice, caveats and examples,
 * whose words say less about which tool is meant. They are indexed as two fields, weighed apart.
 */
export function splitDescription(text: string): { summary: string; description: string } {
  const trimmed = text.trim();
  const end = trimmed.search(/[.!?](\s|$)|\n/);
  if (end < 0) return { summary: trimmed, description: "" };
  return { summary: trimmed.slice(0, end + 1), description: trimmed.slice(end + 1) };
}

/** Property names, descriptions and string enum values of a schema, two levels deep (items included). */
export function paramsText(schema: unknown, depth = 0): string {
  if (!isObject(schema) || depth > 2) return "";
  const parts: string[] = [];
  const props = schema.properties;
  if (isObject(props)) {
    for (const [key, prop] of Object.entries(props)) {
      parts.push(key);
      if (!isObject(prop)) continue;
      if (typeof prop.description === "string") parts.push(prop.description);
      // One push per value: spreading an upstream's enum of 150,000 values would overflow the stack.
      if (Array.isArray(prop.enum)) for (const v of prop.enum) if (typeof v === "string") parts.push(v);
      parts.push(paramsText(prop, depth + 1));
    }
  }
  if (isObject(schema.items)) parts.push(paramsText(schema.items, depth + 1));
  return parts.filter(Boolean).join("\n");
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
