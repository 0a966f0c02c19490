/**
 * @module Setting `default:` or `deferred:` on a toolset in the user's own YAML, keeping every comment and the
 * layout: the `yaml` package's Document API finds the toolset's mapping and its keys with their offsets, and
 * only those bytes change (a value replaced, or one line inserted before its member lists). The result is read
 * back and compared; should it differ in anything but the edits, the Document is written out instead.
 */
import { isMap, isPair, isScalar, type Node, type Pair, parseDocument, type YAMLMap } from "yaml";
import type { Edit } from "./suggest.js";

export interface Edited {
  readonly text: string;
  readonly applied: readonly Edit[];
  /** Edits that could not be made in this file, and why. */
  readonly skipped: readonly { readonly edit: Edit; readonly why: string }[];
}

type Splice = { at: number; end: number; text: string };

const LISTS = new Set(["tools", "prompts", "resources"]);

function keyOf(p: unknown): string | undefined {
  return isPair(p) && isScalar(p.key) ? String(p.key.value) : undefined;
}

function lineStart(text: string, offset: number): number {
  return text.lastIndexOf("\n", offset - 1) + 1;
}

/** Where a new `key: value` line goes in a block mapping: before its first member list (and the comments above it). */
function insertion(text: string, map: YAMLMap, edit: Edit): Splice | undefined {
  const pairs = map.items as Pair<Node, Node | null>[];
  const first = pairs[0]?.key?.range;
  if (!first) return undefined;
  const indent = first[0] - lineStart(text, first[0]);
  const line = `${" ".repeat(indent)}${edit.key}: ${edit.value}\n`;
  const before = pairs.find((p) => LISTS.has(keyOf(p) ?? ""));
  if (before?.key?.range) {
    let at = lineStart(text, before.key.range[0]);
    // Comments written just above the list belong to it: the new line goes above them.
    for (let prev = lineStart(text, at - 1); at > 0 && /^\s*#/.test(text.slice(prev, at)); ) {
      at = prev;
      prev = lineStart(text, at - 1);
    }
    return { at, end: at, text: line };
  }
  const last = pairs[pairs.length - 1];
  const end = last?.value?.range?.[1] ?? last?.key?.range?.[1];
  if (end === undefined) return undefined;
  const next = text.indexOf("\n", end - 1);
  const at = next < 0 ? text.length : next + 1;
  return { at, end: at, text: next < 0 ? `\n${line}` : line };
}

function spliceFor(text: string, map: YAMLMap, edit: Edit): Splice | string {
  const pair = (map.items as Pair<Node, Node | null>[]).find((p) => keyOf(p) === edit.key);
  if (pair) {
    const r = pair.value?.range;
    if (!r || !isScalar(pair.value)) return `its ${edit.key} is not a plain value`;
    return { at: r[0], end: r[1], text: String(edit.value) };
  }
  if (map.flow) {
    if (!map.range) return "it has no position";
    const open = map.range[0] + 1;
    const pad = text[open] === " " ? 1 : 0;
    return { at: open + pad, end: open + pad, text: `${edit.key}: ${edit.value}, ` };
  }
  return insertion(text, map, edit) ?? "its mapping is empty";
}

/** Every value of the document but the edited keys: what must not change. */
function withoutEdits(data: unknown, edits: readonly Edit[]): unknown {
  const copy = structuredClone(data) as { toolsets?: Record<string, Record<string, unknown>> };
  for (const e of edits) delete copy.toolsets?.[e.toolset]?.[e.key];
  return copy;
}

/** `text` with the edits made that this file's toolset declarations allow (the rest skipped, with why). */
export function applyEdits(text: string, edits: readonly Edit[]): Edited {
  const doc = parseDocument(text, { uniqueKeys: true });
  const splices: (Splice & { edit: Edit })[] = [];
  const skipped: { edit: Edit; why: string }[] = [];
  for (const edit of edits) {
    const map = doc.getIn(["toolsets", edit.toolset], true);
    if (!isMap(map)) {
      skipped.push({ edit, why: `toolset ${edit.toolset} is not a mapping in this file` });
      continue;
    }
    const s = spliceFor(text, map, edit);
    if (typeof s === "string") skipped.push({ edit, why: s });
    else splices.push({ ...s, edit });
  }
  let out = text;
  for (const s of [...splices].sort((a, b) => b.at - a.at))
    out = out.slice(0, s.at) + s.text + out.slice(s.end);
  const applied = splices.map((s) => s.edit);
  if (sameBut(text, out, applied)) return { text: out, applied, skipped };
  // The splice changed something it should not have: let the Document write the file.
  for (const e of applied) doc.setIn(["toolsets", e.toolset, e.key], e.value);
  return { text: doc.toString({ lineWidth: 0, flowCollectionPadding: false }), applied, skipped };
}

/** Whether `after` holds the edits and, besides them, exactly what `before` holds. */
function sameBut(before: string, after: string, edits: readonly Edit[]): boolean {
  const a = parseDocument(before);
  const b = parseDocument(after);
  if (b.errors.length) return false;
  for (const e of edits) if (b.getIn(["toolsets", e.toolset, e.key]) !== e.value) return false;
  return JSON.stringify(withoutEdits(a.toJS(), edits)) === JSON.stringify(withoutEdits(b.toJS(), edits));
}
