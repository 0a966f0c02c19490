/** @module A unified diff of two texts, line by line, with three lines of context (what `patch -p1` reads). */

const CONTEXT = 3;

type Op = { kind: " " | "-" | "+"; line: string };

/**
 * The edit script between two line lists: the common ends taken off, then Myers' shortest edit script, whose
 * cost grows with the number of changed lines, not with the file (a few edits in a long file stay cheap).
 */
function script(a: readonly string[], b: readonly string[]): Op[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const ops: Op[] = a.slice(0, start).map((line) => ({ kind: " ", line }));
  ops.push(...myers(a.slice(start, endA), b.slice(start, endB)));
  for (const line of a.slice(endA)) ops.push({ kind: " ", line });
  return ops;
}

function myers(x: readonly string[], y: readonly string[]): Op[] {
  const n = x.length;
  const m = y.length;
  const max = n + m;
  const off = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= max && found < 0; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let i =
        k === -d || (k !== d && v[off + k - 1]! < v[off + k + 1]!) ? v[off + k + 1]! : v[off + k - 1]! + 1;
      let j = i - k;
      while (i < n && j < m && x[i] === y[j]) {
        i++;
        j++;
      }
      v[off + k] = i;
      if (i >= n && j >= m) {
        found = d;
        break;
      }
    }
  }
  // Back from the end along the furthest paths each step recorded.
  const ops: Op[] = [];
  let i = n;
  let j = m;
  for (let d = found; d > 0; d--) {
    const at = trace[d]!;
    const k = i - j;
    const down = k === -d || (k !== d && at[off + k - 1]! < at[off + k + 1]!);
    const pk = down ? k + 1 : k - 1;
    const pi = at[off + pk]!;
    const pj = pi - pk;
    while (i > pi + (down ? 0 : 1) && j > pj + (down ? 1 : 0)) {
      ops.push({ kind: " ", line: x[--i]! });
      j--;
    }
    if (down) ops.push({ kind: "+", line: y[--j]! });
    else ops.push({ kind: "-", line: x[--i]! });
  }
  while (i > 0 && j > 0) {
    ops.push({ kind: " ", line: x[--i]! });
    j--;
  }
  return ops.reverse();
}

function lines(text: string): string[] {
  const l = text.split("\n");
  if (l[l.length - 1] === "") l.pop();
  return l;
}

/** `--- a/FILE` / `+++ b/FILE` and its hunks; empty when the texts are equal. */
export function unifiedDiff(file: string, before: string, after: string): string {
  if (before === after) return "";
  const ops = script(lines(before), lines(after));
  const out = [`--- a/${file}`, `+++ b/${file}`];
  let k = 0;
  while (k < ops.length) {
    if (ops[k]!.kind === " ") {
      k++;
      continue;
    }
    // A hunk: from CONTEXT lines before this change to CONTEXT after the last change within 2×CONTEXT of it.
    let end = k;
    for (let m = k; m < ops.length; m++) {
      if (ops[m]!.kind !== " ") end = m;
      else if (m - end > 2 * CONTEXT) break;
    }
    const from = Math.max(0, k - CONTEXT);
    const to = Math.min(ops.length, end + CONTEXT + 1);
    let oldStart = 1;
    let newStart = 1;
    for (let m = 0; m < from; m++) {
      if (ops[m]!.kind !== "+") oldStart++;
      if (ops[m]!.kind !== "-") newStart++;
    }
    const hunk = ops.slice(from, to);
    const oldLen = hunk.filter((o) => o.kind !== "+").length;
    const newLen = hunk.filter((o) => o.kind !== "-").length;
    out.push(
      `@@ -${oldLen ? oldStart : oldStart - 1},${oldLen} +${newLen ? newStart : newStart - 1},${newLen} @@`,
    );
    for (const o of hunk) out.push(`${o.kind}${o.line}`);
    k = to;
  }
  return `${out.join("\n")}\n`;
}
