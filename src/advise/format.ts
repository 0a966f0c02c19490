/** @module What `toolpacks advise` prints: the table of cost against use, the saving, the suggested diff. */
import type { Saving } from "./saving.js";
import type { Edit, Row } from "./suggest.js";

export interface AdviseReport {
  readonly usage: { readonly from: string; readonly sessions: number; readonly calls: number };
  readonly toolsets: readonly Row[];
  readonly changes: readonly Edit[];
  /** Edits that could not be made in the user's files, and why. */
  readonly skipped: readonly { readonly edit: Edit; readonly why: string }[];
  readonly saving?: Saving;
  /** The suggested change as a unified diff of the config files (empty: nothing to change). */
  readonly diff: string;
  /** With `--write`: the files written. */
  readonly written?: readonly string[];
}

const num = (n: number | undefined, digits = 0) => (n === undefined ? "-" : n.toFixed(digits));

export function adviseText(r: AdviseReport, write: boolean): string {
  const head = [
    "toolset",
    "≈tokens/turn",
    "sessions",
    "called in",
    "calls",
    "calls/1k tok",
    "now",
    "suggestion",
  ];
  const rows = r.toolsets.map((t) => [
    t.toolset,
    num(t.tokens),
    String(t.sessions),
    num(t.calledIn),
    String(t.calls),
    num(t.callsPerKiloToken, 1),
    t.now,
    t.suggestion,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const fmt = (row: string[]) =>
    row
      .map((c, i) =>
        i >= 1 && i <= 5 ? c.padStart(widths[i]!) : i === row.length - 1 ? c : c.padEnd(widths[i]!),
      )
      .join("  ")
      .trimEnd();
  const lines = [`usage: ${r.usage.from}`, "", fmt(head), ...rows.map(fmt), ""];
  for (const s of r.skipped)
    lines.push(`not changed: ${s.edit.toolset} ${s.edit.key}: ${s.edit.value}: ${s.why}`);
  if (!r.changes.length) {
    lines.push("no change suggested");
    return lines.join("\n");
  }
  const d = r.saving?.default_selection;
  if (d)
    lines.push(
      `saves ≈${d.saved_tokens} tokens a turn at a URL that names nothing (≈${d.before.approx_tokens} → ≈${d.after.approx_tokens}, ${d.before.tools} → ${d.after.tools} tools)`,
    );
  const s = r.saving?.sessions;
  if (s)
    lines.push(
      `the ${s.count} session(s) seen, each with its own toolsets: up to ≈${s.mean_saved_tokens} tokens a turn saved on average (the log cannot tell a toolset a URL named from one it got by default)`,
    );
  lines.push(
    "",
    r.written
      ? `written: ${r.written.join(", ")} (check passed on the result)`
      : write
        ? "not written"
        : "suggested change (not written: pass --write to apply it; check runs on the result first):",
    "",
    r.diff.trimEnd(),
  );
  return lines.join("\n");
}
