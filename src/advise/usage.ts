/**
 * @module How often each toolset was used: read from the audit log (one line per call, with its session and
 * that session's selection) or from a running toolpacks' `/metrics` (read once for totals since its start,
 * or twice a period apart for what happened in between).
 */

/** One toolset's use. */
interface ToolsetUse {
  /** Sessions that had it active (audit: sessions that made any call; metrics: sessions open at the reading). */
  sessions: number;
  /** Sessions that called one of its tools (undefined from metrics, which has no session label). */
  calledIn?: number;
  calls: number;
}

export interface Usage {
  /** Where it came from, for the report ("audit log audit.jsonl: 212 calls, 9 sessions"). */
  readonly from: string;
  /** Sessions seen in all. */
  readonly sessions: number;
  readonly calls: number;
  readonly byToolset: ReadonlyMap<string, ToolsetUse>;
  /** Each session's selection as it was served (active and deferred toolsets), for the saving per session. */
  readonly selections: readonly {
    readonly active: readonly string[];
    readonly deferred: readonly string[];
  }[];
}

/** `a,b;defer=b` → its active and deferred toolsets. */
function parseSelectionKey(key: string): { active: string[]; deferred: string[] } {
  const [active = "", rest = ""] = key.split(";defer=");
  const list = (s: string) => s.split(",").filter(Boolean);
  return { active: list(active), deferred: list(rest) };
}

function use(map: Map<string, ToolsetUse>, name: string, audit: boolean): ToolsetUse {
  let u = map.get(name);
  if (!u) {
    u = { sessions: 0, calls: 0, ...(audit ? { calledIn: 0 } : {}) };
    map.set(name, u);
  }
  return u;
}

/** The audit log's lines (JSONL); a line that is not an audit line is counted and skipped. */
export function usageFromAudit(file: string, text: string): Usage & { readonly skipped: number } {
  const sessions = new Map<string, { selection: string; called: Set<string> }>();
  const byToolset = new Map<string, ToolsetUse>();
  let calls = 0;
  let skipped = 0;
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(line) as Record<string, unknown>;
    } catch {
      skipped++;
      continue;
    }
    const { session, selection, toolset } = entry;
    // A call that counts under no toolset (a built-in tool, a name the session has not) still shows its session.
    const counted = typeof toolset === "string" || toolset === null;
    if (typeof session !== "string" || typeof selection !== "string" || !counted) {
      skipped++;
      continue;
    }
    let s = sessions.get(session);
    if (!s) {
      s = { selection, called: new Set() };
      sessions.set(session, s);
    }
    if (toolset === null) continue;
    calls++;
    use(byToolset, toolset, true).calls++;
    s.called.add(toolset);
  }
  const selections = [];
  for (const s of sessions.values()) {
    const sel = parseSelectionKey(s.selection);
    selections.push(sel);
    for (const t of sel.active) use(byToolset, t, true).sessions++;
    for (const t of s.called) {
      const u = use(byToolset, t, true);
      u.calledIn = (u.calledIn ?? 0) + 1;
    }
  }
  return {
    from: `audit log ${file}: ${calls} call(s) in ${sessions.size} session(s)`,
    sessions: sessions.size,
    calls,
    byToolset,
    selections,
    skipped,
  };
}

/** `name{a="x",b="y"} 3` → its labels and value; other lines (comments, other metrics) give undefined. */
function sample(line: string, metric: string): { labels: Record<string, string>; value: number } | undefined {
  if (!line.startsWith(`${metric}{`)) return undefined;
  const close = line.lastIndexOf("}");
  const value = Number(
    line
      .slice(close + 1)
      .trim()
      .split(/\s+/)[0],
  );
  if (close < 0 || !Number.isFinite(value)) return undefined;
  const labels: Record<string, string> = {};
  const re = /([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
  const body = line.slice(metric.length + 1, close);
  for (let m = re.exec(body); m; m = re.exec(body))
    labels[m[1]!] = m[2]!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
  return { labels, value };
}

/** Calls per toolset and open sessions per selection, as one `/metrics` page says. */
export interface MetricsReading {
  readonly calls: ReadonlyMap<string, number>;
  readonly sessions: ReadonlyMap<string, number>;
}

export function readMetrics(text: string): MetricsReading {
  const calls = new Map<string, number>();
  const sessions = new Map<string, number>();
  for (const line of text.split("\n")) {
    const c = sample(line, "toolpacks_calls_total");
    if (c?.labels.toolset !== undefined)
      calls.set(c.labels.toolset, (calls.get(c.labels.toolset) ?? 0) + c.value);
    const s = sample(line, "toolpacks_sessions");
    if (s?.labels.selection !== undefined) sessions.set(s.labels.selection, s.value);
  }
  return { calls, sessions };
}

/**
 * Use from one reading (totals since the server started) or two (`before`: what happened between them; the
 * sessions are those open at the later reading). A selection counted as `other` names no toolsets.
 */
export function usageFromMetrics(url: string, after: MetricsReading, before?: MetricsReading): Usage {
  const byToolset = new Map<string, ToolsetUse>();
  let calls = 0;
  for (const [toolset, n] of after.calls) {
    const delta = Math.max(0, n - (before?.calls.get(toolset) ?? 0));
    use(byToolset, toolset, false).calls += delta;
    calls += delta;
  }
  let sessions = 0;
  const selections = [];
  for (const [key, n] of after.sessions) {
    if (key === "other" || n <= 0) continue;
    sessions += n;
    const sel = parseSelectionKey(key);
    for (let i = 0; i < n; i++) selections.push(sel);
    for (const t of sel.active) use(byToolset, t, false).sessions += n;
  }
  return {
    from: `${url} (${before ? "between two readings" : "since the server started"}): ${calls} call(s), ${sessions} open session(s)`,
    sessions,
    calls,
    byToolset,
    selections,
  };
}
