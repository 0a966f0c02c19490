/**
 * @module Version ranges of client profiles (`>=1.2 <2`, `^1.4`, `1.x || >=3`): parsed once at compile time,
 * matched against the `clientInfo.version` a client sends. Versions compare as dot-separated numbers.
 */

/** One comparison: the version against `parts` (missing parts are 0). */
interface Comparator {
  readonly op: ">=" | ">" | "<=" | "<" | "=";
  readonly parts: readonly number[];
}

/** Any of the sets holds when each of its comparators holds. */
export type VersionRange = readonly (readonly Comparator[])[];

export type RangeRead = { ok: true; range: VersionRange } | { ok: false; error: string };

const NUMBER = /^\d{1,9}$/;
const WILD = /^[xX*]$/;

/** `1.2.3`, `v2`, `1.x`: the numbers given, and how many were given before a wildcard or the end. */
function partsOf(text: string): { parts: number[]; given: number } | undefined {
  const bare = text.replace(/^v/i, "").split(/[-+]/)[0] ?? "";
  const pieces = bare.split(".");
  if (pieces.length > 4 || pieces.some((p) => !NUMBER.test(p) && !WILD.test(p))) return undefined;
  const parts: number[] = [];
  for (const p of pieces) {
    if (WILD.test(p)) break;
    parts.push(Number(p));
  }
  return { parts, given: parts.length };
}

/** The next version up at `index` (`1.4` at 0 → `2`), where a partial or wildcard version ends. */
function bump(parts: readonly number[], index: number): number[] {
  const out = parts.slice(0, index + 1);
  out[index] = (out[index] ?? 0) + 1;
  return out;
}

function comparators(term: string): Comparator[] | undefined {
  const m = /^(>=|<=|>|<|=|\^|~)?(.+)$/.exec(term);
  if (!m) return undefined;
  const op = m[1] ?? "";
  const v = partsOf(m[2]!);
  if (!v) return undefined;
  const { parts, given } = v;
  // `*` and `x` are any version; a comparison with one says nothing a reader could mean.
  if (given === 0) return op === "" || op === "=" ? [] : undefined;
  switch (op) {
    case ">=":
    case "<":
      return [{ op, parts }];
    case ">":
      // `>1.2` means past every 1.2.x, as npm reads a partial version.
      return given < 3 ? [{ op: ">=", parts: bump(parts, given - 1) }] : [{ op, parts }];
    case "<=":
      return given < 3 ? [{ op: "<", parts: bump(parts, given - 1) }] : [{ op, parts }];
    case "^": {
      const first = parts.findIndex((p) => p !== 0);
      const at = first < 0 ? given - 1 : Math.min(first, given - 1);
      return [
        { op: ">=", parts },
        { op: "<", parts: bump(parts, at) },
      ];
    }
    case "~":
      return [
        { op: ">=", parts },
        { op: "<", parts: bump(parts, given >= 2 ? 1 : 0) },
      ];
    default:
      // `1.2` and `1.2.x` are every 1.2.x; a full version is that version.
      return given < 3
        ? [
            { op: ">=", parts },
            { op: "<", parts: bump(parts, given - 1) },
          ]
        : [{ op: "=", parts }];
  }
}

/** Parses a range; an unreadable term is an error naming it. */
export function parseRange(text: string): RangeRead {
  const sets: Comparator[][] = [];
  for (const alternative of text.split("||")) {
    const terms = alternative
      .trim()
      .replace(/(>=|<=|>|<|=|\^|~)\s+/g, "$1")
      .split(/\s+/)
      .filter(Boolean);
    if (!terms.length) return { ok: false, error: `"${text}" has an empty side of "||"` };
    const set: Comparator[] = [];
    for (const term of terms) {
      const c = comparators(term);
      if (!c) return { ok: false, error: `"${term}" is not a version comparison` };
      set.push(...c);
    }
    sets.push(set);
  }
  return { ok: true, range: sets };
}

function compare(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}

/** Whether `version` (as a client sends it) is in the range; a version with no leading number is in none. */
export function satisfies(range: VersionRange, version: string): boolean {
  const m = /^v?(\d{1,9}(?:\.\d{1,9}){0,3})/i.exec(version.trim());
  if (!m) return false;
  const v = m[1]!.split(".").map(Number);
  return range.some((set) =>
    set.every((c) => {
      const d = compare(v, c.parts);
      return c.op === ">="
        ? d >= 0
        : c.op === ">"
          ? d > 0
          : c.op === "<="
            ? d <= 0
            : c.op === "<"
              ? d < 0
              : d === 0;
    }),
  );
}
