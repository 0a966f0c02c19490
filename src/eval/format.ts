/** @module What `toolpacks eval` prints: the figures per toolset and overall, the misses, the three surfaces. */
import type { ProfileDeferral, ProfileEntry } from "../clients/report.js";
import type { Figure } from "../report.js";
import type { Figures, Scores } from "./score.js";

/** tools/list of the selection three ways: every tool listed, as the selection defers, as `--client` gets it. */
export interface Surfaces {
  readonly listed: Figure;
  readonly deferred: Figure;
  readonly client?: Figure & {
    readonly client: string;
    readonly profile?: ProfileEntry;
    readonly deferred_by_profile?: readonly ProfileDeferral[];
  };
}

export interface EvalReport extends Scores {
  /** The `--select` query, or `everything` (every toolset, every one deferred). */
  readonly selection: string;
  readonly tasks: number;
  /** Distinct tools find_tools searches in the selection. */
  readonly tools: number;
  readonly toolsets: readonly string[];
  readonly surfaces: Surfaces;
  /** With `--min-recall1`/`--min-recall5`: the floors, and whether the figures meet them. */
  readonly thresholds?: {
    readonly min_recall1?: number;
    readonly min_recall5?: number;
    readonly passed: boolean;
  };
}

const f3 = (x: number) => x.toFixed(3);

function row(name: string, f: Figures, w: number): string {
  return `${name.padEnd(w)}  ${String(f.tasks).padStart(5)}  ${f3(f.recall_at_1).padStart(8)}  ${f3(f.recall_at_5).padStart(8)}  ${f3(f.mrr).padStart(5)}`;
}

const surface = (label: string, f: Figure) =>
  `  ${label} ${String(f.tools).padStart(4)} tools, ${String(f.schema_bytes).padStart(7)} bytes, ≈${f.approx_tokens} tokens`;

export function evalText(r: EvalReport): string {
  const groups = Object.keys(r.by_toolset);
  const w = Math.max(7, ...groups.map((g) => g.length));
  const lines = [
    `eval: ${r.tasks} task(s) over ${r.tools} tool(s) find_tools searches (selection: ${r.selection}; deferred: ${r.toolsets.join(", ")})`,
    "",
    `${"toolset".padEnd(w)}  tasks  recall@1  recall@5    MRR`,
    ...groups.map((g) => row(g, r.by_toolset[g]!, w)),
    row("overall", r.overall, w),
  ];
  lines.push(
    "",
    r.misses.length ? `misses (${r.misses.length}): query → first hit (expected, rank)` : "misses: none",
  );
  for (const m of r.misses) {
    const where = m.toolset !== undefined ? ` [toolset ${m.toolset}]` : "";
    const rank = m.rank !== undefined ? `rank ${m.rank}` : "not in the first 20";
    lines.push(
      `  ${m.where}: ${JSON.stringify(m.query)}${where} → ${m.first ?? "(nothing)"} (expected ${m.expected.join(" or ")}, ${rank})`,
    );
  }
  const s = r.surfaces;
  const labels = ["listed:", "deferred:", ...(s.client ? [`${s.client.client}:`] : [])];
  const lw = Math.max(...labels.map((l) => l.length));
  lines.push("", "tokens per turn (tools/list; ≈tokens = bytes / 4):");
  lines.push(surface("listed:".padEnd(lw), s.listed), surface("deferred:".padEnd(lw), s.deferred));
  if (s.client) {
    const c = s.client;
    const how = c.profile
      ? `profile ${c.profile.client.join(", ")} (${c.profile.from})${c.deferred_by_profile?.length ? `, deferring ${c.deferred_by_profile.map((d) => d.name).join(", ")}` : ""}`
      : "no profile matches";
    lines.push(`${surface(`${c.client}:`.padEnd(lw), c)}  (${how})`);
  }
  if (r.thresholds) lines.push("", thresholdLine(r));
  return lines.join("\n");
}

/** Passed: every floor asked for; failed: only the floors missed, each with what was measured. */
function thresholdLine(r: EvalReport): string {
  const t = r.thresholds!;
  const floors = [
    { name: "recall@1", floor: t.min_recall1, measured: r.overall.recall_at_1 },
    { name: "recall@5", floor: t.min_recall5, measured: r.overall.recall_at_5 },
  ].filter((f): f is { name: string; floor: number; measured: number } => f.floor !== undefined);
  if (t.passed) return `passed: ${floors.map((f) => `${f.name} ≥ ${f.floor}`).join(", ")}`;
  const missed = floors.filter((f) => f.measured < f.floor);
  // Three decimals, unless rounding would show the figure at its floor.
  const shown = (f: { floor: number; measured: number }) =>
    Number(f3(f.measured)) < f.floor ? f3(f.measured) : String(f.measured);
  return `FAILED: ${missed.map((f) => `${f.name} ${shown(f)} < ${f.floor}`).join(", ")}`;
}
