/** @module Text for the written file: YAML scalars on one line, and comments that stay one line each. */
import { stringify } from "yaml";

/** A YAML scalar on one line: plain when that reads back as the same string, else quoted. */
export function scalar(s: string): string {
  const y = stringify(s, { lineWidth: 0 }).replace(/\n$/, "");
  return y.includes("\n") ? JSON.stringify(s) : y;
}

/** Control characters out and a length cap: a server's text must not break out of a YAML comment line. */
export function oneLine(s: string, max = 100): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters do not belong in a comment
  const t = s.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
  return t.length > max ? `${t.slice(0, max - 1).trimEnd()}…` : t;
}

/** The first non-empty line of an item's description (else its title): the note beside a member. */
export function firstLine(item: { title?: string; description?: string }): string {
  const d = (item.description ?? "")
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l);
  return oneLine(d ?? item.title ?? "");
}

/** Lines as YAML comments at an indent, each kept to one line. */
export function comment(lines: readonly string[], indent: string): string[] {
  return lines.map((l) => `${indent}# ${oneLine(l, 200)}`.trimEnd());
}
