/**
 * @module The find_tools indexes of a gateway: one per distinct set of deferred tools (not per resolution), built
 * at its first search and kept in a small LRU of their own, bounded by count and by tools indexed (SPEC §7.6).
 * Dropping one costs only a rebuild at its next search. Searches that arrive while an index is built wait for
 * the same build; at most {@link BUILDS_AT_ONCE} builds run at a time, so a burst of distinct first searches
 * cannot hold many half-built indexes at once.
 */
import type { Resolution } from "../resolve.js";
import { searchEntries } from "../search/deferred.js";
import { indexKeyOf } from "../search/index-key.js";
import type { SearchEntry, ToolIndex } from "../search/types.js";

/** Indexes kept. A session searches one; eight lets the few selections a deployment serves stay built. */
export const MAX_SEARCH_INDEXES = 8;
/**
 * Entries kept across all indexes: an entry costs about 2.5–3 KB of heap with 1–2 KB descriptions, so about 55 MB.
 * One 5,000-tool selection fits four times over.
 */
const MAX_INDEXED_TOOLS = 20_000;
/** Builds in progress at a time (each holds a half-built index); the others wait their turn. */
export const BUILDS_AT_ONCE = 2;

export type BuildIndex = (entries: readonly SearchEntry[]) => Promise<ToolIndex>;

export interface SearchIndexOptions {
  readonly maxIndexes?: number;
  readonly maxTools?: number;
  /** Builds the index (default: minisearch, in chunks, loaded at the first search). */
  readonly build?: BuildIndex;
  /** An index was dropped to make room. */
  readonly evicted?: () => void;
}

interface Held {
  readonly index: Promise<ToolIndex>;
  readonly entries: number;
}

// minisearch loads with the first search, not at start.
const minisearchBuild: BuildIndex = (entries) =>
  import("../search/build.js").then((m) => m.buildIndexAsync(entries));

export class SearchIndexes {
  /** By key, least recently searched first. */
  private readonly held = new Map<string, Held>();
  private entries = 0;
  private running = 0;
  private readonly queue: (() => void)[] = [];
  private readonly maxIndexes: number;
  private readonly maxTools: number;
  private readonly build: BuildIndex;

  constructor(private readonly options: SearchIndexOptions = {}) {
    this.maxIndexes = Math.max(1, options.maxIndexes ?? MAX_SEARCH_INDEXES);
    this.maxTools = options.maxTools ?? MAX_INDEXED_TOOLS;
    this.build = options.build ?? minisearchBuild;
  }

  /** Indexes kept (built or being built). */
  get size(): number {
    return this.held.size;
  }

  /** Entries indexed across the kept indexes. */
  get tools(): number {
    return this.entries;
  }

  /** The index of the resolution's deferred tools: the kept one, the one being built, or a new build. */
  of(resolution: Resolution): Promise<ToolIndex> {
    const { key, entries } = indexKeyOf(resolution);
    const kept = this.held.get(key);
    if (kept) {
      this.held.delete(key);
      this.held.set(key, kept);
      return kept.index;
    }
    const held: Held = { index: this.built(resolution), entries };
    this.held.set(key, held);
    this.entries += entries;
    // A failed build is not kept: the next search tries again.
    held.index.catch(() => {
      if (this.held.get(key) === held) this.drop(key, held);
    });
    this.evict();
    return held.index;
  }

  /** Drops the least recently searched until within both bounds; the newest is always kept. */
  private evict(): void {
    while (this.held.size > 1 && (this.held.size > this.maxIndexes || this.entries > this.maxTools)) {
      const [key, held] = this.held.entries().next().value!;
      this.drop(key, held);
      this.options.evicted?.();
    }
  }

  private drop(key: string, held: Held): void {
    this.held.delete(key);
    this.entries -= held.entries;
  }

  private async built(resolution: Resolution): Promise<ToolIndex> {
    if (this.running >= BUILDS_AT_ONCE) await new Promise<void>((go) => this.queue.push(go));
    else this.running++;
    try {
      return await this.build(searchEntries(resolution));
    } finally {
      const next = this.queue.shift();
      if (next) next();
      else this.running--;
    }
  }
}
