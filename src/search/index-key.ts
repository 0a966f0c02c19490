/**
 * @module What a find_tools index is an index of: a digest of every field of a resolution's search entries, in
 * order. Resolutions with the same deferred tools (their definitions and toolsets alike) get the same key and
 * can share one index; any difference in what would be indexed or returned gives another key.
 */
import { createHash } from "node:crypto";
import type { Resolution } from "../resolve.js";
import { searchEntries } from "./deferred.js";
import type { SearchEntry } from "./types.js";

/** An index's identity and its size (the entries it indexes, a tool once per deferred toolset that offers it). */
export interface IndexKey {
  readonly key: string;
  readonly entries: number;
}

const keys = new WeakMap<Resolution, IndexKey>();

/** The key of a resolution's deferred tools, computed once per resolution. */
export function indexKeyOf(resolution: Resolution): IndexKey {
  let k = keys.get(resolution);
  if (!k) {
    const entries = searchEntries(resolution);
    k = Object.freeze({ key: entriesKey(entries), entries: entries.length });
    keys.set(resolution, k);
  }
  return k;
}

/**
 * SHA-256 over one JSON line per entry, every field in a fixed place (absent as null): JSON escapes newlines
 * inside strings, so distinct entry lists are distinct texts, and only a SHA-256 collision could share a key.
 */
function entriesKey(entries: readonly SearchEntry[]): string {
  const hash = createHash("sha256");
  for (const e of entries) {
    const line = [
      e.name,
      e.title,
      e.description,
      e.inputSchema,
      e.toolset,
      e.toolsetTitle,
      e.toolsetDescription,
    ];
    hash.update(`${JSON.stringify(line)}\n`);
  }
  return hash.digest("base64url");
}
