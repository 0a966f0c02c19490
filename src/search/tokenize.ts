/** @module The tool-search tokeniser: identifiers split on `_ - . /` and case/digit changes, stop words, light stemming. */

/**
 * Words that say nothing about which tool is meant. Kept short on purpose: BM25's IDF already discounts
 * words every description has; this list is for the words of a request ("can you please…") that the
 * descriptions lack, which would otherwise pull in the few tools that happen to use them.
 */
const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "a an the and or of to in on at by for with from into onto as is are was were be been being am " +
    "it its it's this that these those there here i me my mine we us our ours you your yours he she him her " +
    "they them their what which who whom whose how when where why can could should would will shall may " +
    "might must do does did doing done please thanks thank let lets let's want wanna need like just also " +
    "some any so if then than too very via using use one"
  ).split(" "),
);

/** A word inside an identifier ends where lower case meets upper case, an acronym meets a word (`HTTPServer`, not `PRs`), or letters meet digits. */
const CASE_BOUNDARY =
  /(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z]{2})|(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])/;
/** Everything but letters, digits and the identifier separators separates raw tokens. */
const RAW_SPLIT = /[^\p{L}\p{N}_\-./]+/u;
const SEPARATORS = /[_\-./]+/;
const EDGE_SEPARATORS = /^[_\-./]+|[_\-./]+$/g;

/**
 * Splits text into terms: every word of an identifier (`createIssue`, `list_open-PRs`, `owner/repo`) and
 * the whole identifier joined by `_` (so `createIssue`, `create-issue` and `create_issue` meet), all
 * lower case. Stop words and stemming are left to {@link normalize}.
 */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split(RAW_SPLIT)) {
    const token = raw.replace(EDGE_SEPARATORS, "");
    if (!token) continue;
    const parts: string[] = [];
    for (const piece of token.split(SEPARATORS)) {
      for (const word of piece.split(CASE_BOUNDARY)) if (word) parts.push(word);
    }
    // Words singular (`PRs` is `pr`); the whole identifier as written (`list_open_prs`), however it is cased.
    // One push per word: spreading a token of 200,000 parts into push() would overflow the stack.
    for (const p of parts) out.push(singularAcronym(p).toLowerCase());
    if (parts.length > 1 && !isNumberLike(parts)) out.push(parts.join("_").toLowerCase());
  }
  return out;
}

/** An acronym's plural is the acronym: `PRs` → `PR`, `URLs` → `URL` (too short for the stemmer to see). */
function singularAcronym(word: string): string {
  return /^[A-Z]{2,}s$/.test(word) ? word.slice(0, -1) : word;
}

/** `1.5`, `2026-07-28`: not an identifier worth keeping whole. */
function isNumberLike(parts: readonly string[]): boolean {
  return parts.every((p) => /^\d+$/.test(p));
}

/** The mark a whole identifier carries in the index (`=create_issue`): no word begins with it. */
export const WHOLE = "=";

/** A term as the index stores it, or null to drop it: stop words and single letters go; words are stemmed. */
export function normalize(term: string): string | null {
  if (term.length < 2 || STOP_WORDS.has(term)) return null;
  // A whole identifier is matched as written: stemming `create_issue` would only blur it. Its mark keeps a
  // word's prefix (`creat…`) from walking every `create_…` identifier of a large catalog.
  if (term.includes("_")) return `${WHOLE}${term}`;
  return stem(term);
}

const VOWEL = /[aeiouy]/;

/**
 * A light English stemmer, enough that `issues`/`issue`, `creating`/`created`/`create`,
 * `repositories`/`repository`, `recently`/`recent` and `reviewers`/`review` meet; the same function runs
 * on documents and queries, so a rough cut only has to be consistent.
 */
export function stem(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  let w = word;
  if (w.endsWith("ies") && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (w.endsWith("s") && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  let cut = false;
  if (w.endsWith("ly") && w.length > 5) return w.slice(0, -2);
  if (w.endsWith("er") && w.length > 6) return w.slice(0, -2);
  if (w.endsWith("ing") && w.length > 5 && VOWEL.test(w.slice(0, -3))) {
    w = w.slice(0, -3);
    cut = true;
  } else if (w.endsWith("ed") && w.length > 4 && VOWEL.test(w.slice(0, -2))) {
    w = w.slice(0, -2);
    cut = true;
  }
  // running → runn → run; but keep "ll"/"ss"/"zz" (installed → install).
  if (cut && /([^aeiouylsz])\1$/.test(w)) w = w.slice(0, -1);
  if (w.endsWith("e") && w.length > 3) w = w.slice(0, -1);
  return w;
}

/** The terms of a query, as the index would store them. */
export function queryTerms(query: string): string[] {
  const terms: string[] = [];
  for (const t of tokenize(query)) {
    const n = normalize(t);
    if (n !== null) terms.push(n);
  }
  return terms;
}

/** The stop words of a query, stemmed: some still say what is wanted (`which` … → list) to the expansion table. */
export function queryStopWords(query: string): string[] {
  const words: string[] = [];
  for (const t of tokenize(query)) if (STOP_WORDS.has(t)) words.push(stem(t));
  return words;
}
