/**
 * @module The most recent calls of the audit log file, for the console's live panel: read from the file's end
 * when the page asks (nothing is kept in memory for it), without arguments (a page shows who called what and how
 * it ended, never what was sent).
 */
import { open } from "node:fs/promises";
import type { AuditLine } from "./wire.js";

/** How much of the file's end is read: plenty for the lines shown, bounded however large the file grew. */
const TAIL_BYTES = 64 * 1024;

/** The last `limit` calls of an audit file, oldest first; none when it cannot be read (not written yet). */
export async function auditTail(file: string, limit: number): Promise<AuditLine[]> {
  let text: string;
  let whole: boolean;
  try {
    const handle = await open(file, "r");
    try {
      const { size } = await handle.stat();
      const start = Math.max(0, size - TAIL_BYTES);
      const buffer = Buffer.alloc(size - start);
      await handle.read(buffer, 0, buffer.length, start);
      text = buffer.toString("utf8");
      whole = start === 0;
    } finally {
      await handle.close();
    }
  } catch {
    return [];
  }
  return parseAuditLines(text, whole).slice(-limit);
}

/** Audit lines from a piece of the file; unless it is the whole file, its first line may be cut and is skipped. */
export function parseAuditLines(text: string, whole: boolean): AuditLine[] {
  const lines = text.split("\n");
  if (!whole) lines.shift();
  const out: AuditLine[] = [];
  for (const line of lines) {
    if (!line.trim()) continue;
    let v: Record<string, unknown>;
    try {
      v = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    const str = (k: string) => (typeof v[k] === "string" ? (v[k] as string) : "");
    out.push({
      time: str("time"),
      subject: typeof v.subject === "string" ? v.subject : null,
      toolset: str("toolset"),
      // A prompt's line names its prompt, a resource read's its URI, where a tool call's names its tool.
      tool: str("tool") || str("prompt") || str("uri"),
      upstream: str("upstream"),
      outcome: str("outcome"),
      duration_ms: typeof v.duration_ms === "number" ? v.duration_ms : 0,
    });
  }
  return out;
}
