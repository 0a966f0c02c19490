/** @module Where a declaration is, as `file:line:col`: what every compiled item carries for messages. */

export function where(p: { line: number; col: number }, file: string): string {
  return `${file}:${p.line}:${p.col}`;
}
