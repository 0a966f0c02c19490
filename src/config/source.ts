/** @module A parsed YAML file that remembers where each value came from. */
import { isMap, isPair, isScalar, isSeq, LineCounter, type Node, parseDocument } from "yaml";
import type { ConfigError } from "./errors.js";

export type Path = readonly (string | number)[];

export interface Source {
  readonly file: string;
  readonly data: unknown;
  /** Position of the value at `path` (or of its key, when `key` is set); falls back to the nearest parent. */
  at(path: Path, key?: boolean): { line: number; col: number };
  error(path: Path, message: string, hint?: string, key?: boolean): ConfigError;
}

export function parseSource(file: string, text: string): { source: Source; errors: ConfigError[] } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const pos = (offset: number) => {
    const p = lineCounter.linePos(offset);
    return { line: p.line, col: p.col };
  };
  const at = (path: Path, key = false) => {
    let node: unknown = doc.contents;
    let found = node as Node | null;
    let keyNode: Node | null = null;
    for (const seg of path) {
      keyNode = null;
      if (isMap(node)) {
        const pair = node.items.find(
          (p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(seg),
        );
        if (!pair) break;
        keyNode = pair.key as Node;
        node = pair.value;
      } else if (isSeq(node) && typeof seg === "number") {
        node = node.items[seg];
      } else break;
      if (!node || !(node as Node).range) {
        found = keyNode ?? found;
        break;
      }
      found = node as Node;
    }
    const target = key && keyNode ? keyNode : found;
    return target?.range ? pos(target.range[0]) : { line: 1, col: 1 };
  };
  const errors: ConfigError[] = doc.errors.map((e) => {
    const p = pos(e.pos[0]);
    return { file, line: p.line, col: p.col, message: `YAML syntax: ${e.message.split("\n")[0]}` };
  });
  const data = errors.length ? undefined : doc.toJS({ maxAliasCount: 100 });
  const source: Source = {
    file,
    data,
    at,
    error: (path, message, hint, key) => {
      const p = at(path, key);
      return { file, line: p.line, col: p.col, message, ...(hint ? { hint } : {}) };
    },
  };
  return { source, errors };
}
