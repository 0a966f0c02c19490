/** @module Name-word coverage: a tool whose name has words the query did not match ranks below a sibling whose name it covers. */
import { normalize, tokenize, WHOLE } from "./tokenize.js";

/**
 * The words of a tool's name as the index stores them, less the words of its toolset's name (a server prefix
 * such as `github_` says where a tool is, not what it does) and the whole-identifier term.
 */
export function nameWords(name: string, toolset: string): readonly string[] {
  const where = new Set(terms(toolset));
  return [...new Set(terms(name))].filter((w) => !w.startsWith(WHOLE) && !where.has(w));
}

function terms(text: string): string[] {
  const out: string[] = [];
  for (const t of tokenize(text)) {
    const n = normalize(t);
    if (n !== null) out.push(n);
  }
  return out;
}

/**
 * How many of `words` (a tool's name words) the query did not match in the name, given minisearch's
 * `match` (index term → the fields it matched in): `reverse_geocode` for "geocode this address" leaves one.
 */
export function unmatchedNameWords(
  words: readonly string[],
  match: Readonly<Record<string, readonly string[]>>,
): number {
  let unmatched = 0;
  for (const w of words) if (!Object.hasOwn(match, w) || !match[w]!.includes("name")) unmatched++;
  return unmatched;
}
