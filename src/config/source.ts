/** @module A parsed YAML file that remembers where each value came from. */
import { isAlias, isMap, isPair, isScalar, isSeq, LineCounter, type Node, parseDocument } from "yaml";
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
  let data: unknown;
  if (!errors.length) {
    try {
      data = doc.toJS({ maxAliasCount: 100 });
    } catch (err) {
      // An alias to an anchor that does not exist, or one that expands too often (an alias bomb).
      const node = findAlias(doc.contents);
      const p = node?.range ? pos(node.range[0]) : { line: 1, col: 1 };
      errors.push({
        file,
        line: p.line,
        col: p.col,
        message: `YAML: ${(err as Error).message.split("\n")[0]}`,
        hint: "check the file's anchors (&name) and aliases (*name)",
      });
    }
  }
  if (!errors.length) errors.push(...plainValueErrors(file, data, (path) => at(path)));
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

function findAlias(node: unknown): Node | undefined {
  if (isAlias(node)) return node;
  if (isMap(node)) {
    for (const p of node.items) {
      const hit = findAlias(p.key) ?? findAlias(p.value);
      if (hit) return hit;
    }
  } else if (isSeq(node)) {
    for (const i of node.items) {
      const hit = findAlias(i);
      if (hit) return hit;
    }
  }
  return undefined;
}

/** Only what JSON can say: a tagged value (!!set, !!binary, !!timestamp) is an error at its node. */
function plainValueErrors(
  file: string,
  data: unknown,
  at: (path: Path) => { line: number; col: number },
): ConfigError[] {
  const errors: ConfigError[] = [];
  const walk = (v: unknown, path: (string | number)[]) => {
    if (v === null || typeof v !== "object") return;
    if (Array.isArray(v)) {
      for (const [i, x] of v.entries()) walk(x, [...path, i]);
      return;
    }
    if (Object.getPrototypeOf(v) !== Object.prototype) {
      const p = at(path);
      errors.push({
        file,
        ...p,
        message: `${path.join(".") || "the file"} is a ${v.constructor?.name ?? "tagged"} value; only strings, numbers, booleans, lists and mappings are allowed`,
        hint: "remove the !! tag",
      });
      return;
    }
    for (const [k, x] of Object.entries(v)) walk(x, [...path, k]);
  };
  walk(data, []);
  return errors;
}
