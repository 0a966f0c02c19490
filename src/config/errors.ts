/** @module Config errors: where in which file, what is wrong, and how to fix it. Never sent on the wire. */

export interface ConfigError {
  readonly file: string;
  readonly line: number;
  readonly col: number;
  readonly message: string;
  readonly hint?: string;
}

/** `FILE:LINE:COL: message (hint)`, the one format every command prints. */
export function formatConfigError(e: ConfigError): string {
  return `${e.file}:${e.line}:${e.col}: ${e.message}${e.hint ? ` (${e.hint})` : ""}`;
}

/** Closest candidate by edit distance, for "did you mean" hints; undefined when nothing is close. */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(word.length / 3)) + 1;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 8) return 99;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}

/** Reads back a `file:line:col` string into an error position. */
export function locate(where: string): { file: string; line: number; col: number } {
  const m = /^(.*):(\d+):(\d+)$/.exec(where);
  return m ? { file: m[1]!, line: Number(m[2]), col: Number(m[3]) } : { file: where, line: 1, col: 1 };
}
