/**
 * @module How well search finds the tools a tasks file expects: recall@1, recall@5 and MRR, overall and per
 * toolset, and the misses. Pure: it is given the ranked names a search answers with.
 */
import type { Task } from "./tasks.js";

/** Ranks past this count as not found: find_tools' largest `limit`. */
export const RANK_DEPTH = 20;

export interface Figures {
  readonly tasks: number;
  /** Share of tasks whose first hit is an expected tool. */
  readonly recall_at_1: number;
  /** Share of tasks with an expected tool among the first five hits. */
  readonly recall_at_5: number;
  /** Mean of 1 / the rank of the first expected tool (0 when not in the first {@link RANK_DEPTH}). */
  readonly mrr: number;
}

/** A task whose first hit is not an expected tool. */
interface Miss {
  readonly where: string;
  readonly query: string;
  readonly toolset?: string;
  readonly expected: readonly string[];
  /** What came first (undefined: nothing matched). */
  readonly first?: string;
  /** The first expected tool's rank, when within {@link RANK_DEPTH}. */
  readonly rank?: number;
}

export interface Scores {
  readonly overall: Figures;
  /** By the task's `toolset`, else the toolset of its first expected tool; in the order given. */
  readonly by_toolset: Readonly<Record<string, Figures>>;
  readonly misses: readonly Miss[];
}

/** The 1-based rank of the first expected name among `ranked`, or undefined. */
export function rankOf(ranked: readonly string[], expected: readonly string[]): number | undefined {
  const i = ranked.findIndex((n) => expected.includes(n));
  return i < 0 || i >= RANK_DEPTH ? undefined : i + 1;
}

function figures(ranks: readonly (number | undefined)[]): Figures {
  const n = ranks.length;
  const share = (k: number) => (n ? ranks.filter((r) => r !== undefined && r <= k).length / n : 0);
  const mrr = n ? ranks.reduce<number>((s, r) => s + (r ? 1 / r : 0), 0) / n : 0;
  return { tasks: n, recall_at_1: share(1), recall_at_5: share(5), mrr };
}

/**
 * Scores `tasks` against `search` (the ranked names for a query, best first, searched in `toolset` when the
 * task names one); `groupOf` gives the toolset a task counts under, and `order` the order groups are listed in.
 */
export function scoreTasks(
  tasks: readonly Task[],
  search: (query: string, toolset?: string) => readonly string[],
  groupOf: (task: Task) => string,
  order: readonly string[] = [],
): Scores {
  const ranks: (number | undefined)[] = [];
  const groups = new Map<string, (number | undefined)[]>(order.map((g) => [g, []]));
  const misses: Miss[] = [];
  for (const task of tasks) {
    const ranked = search(task.query, task.toolset);
    const rank = rankOf(ranked, task.expect);
    ranks.push(rank);
    const group = groupOf(task);
    const list = groups.get(group) ?? [];
    list.push(rank);
    groups.set(group, list);
    if (rank !== 1) {
      misses.push({
        where: task.where,
        query: task.query,
        ...(task.toolset !== undefined ? { toolset: task.toolset } : {}),
        expected: task.expect,
        ...(ranked[0] !== undefined ? { first: ranked[0] } : {}),
        ...(rank !== undefined ? { rank } : {}),
      });
    }
  }
  const by: Record<string, Figures> = {};
  for (const [g, list] of groups) if (list.length) by[g] = figures(list);
  return { overall: figures(ranks), by_toolset: by, misses };
}
