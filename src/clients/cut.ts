/** @module A description cut to a client's byte budget: at a word boundary, ending with `…`. */

const ELLIPSIS = "…";
const ELLIPSIS_BYTES = Buffer.byteLength(ELLIPSIS);

/**
 * `text` when it fits in `maxBytes` UTF-8 bytes; otherwise its longest prefix that ends at a word boundary
 * (trailing spaces and punctuation dropped) followed by `…`, within `maxBytes` in all. A first word longer
 * than the budget is cut inside it, never inside a character.
 */
export function cutDescription(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  const room = Math.max(0, maxBytes - ELLIPSIS_BYTES);
  // The longest prefix of whole code points within `room` bytes.
  let end = 0;
  let bytes = 0;
  for (const ch of text) {
    const b = Buffer.byteLength(ch);
    if (bytes + b > room) break;
    bytes += b;
    end += ch.length;
  }
  let prefix = text.slice(0, end);
  // Cut back to the last word boundary, unless the prefix already ends at one.
  if (end < text.length && !/\s/.test(text[end]!)) {
    const space = prefix.search(/\s\S*$/);
    if (space > 0) prefix = prefix.slice(0, space);
  }
  prefix = prefix.replace(/[\s,;:.\-–—(]+$/u, "");
  return `${prefix}${ELLIPSIS}`;
}
