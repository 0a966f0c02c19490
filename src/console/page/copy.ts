/** @module Copying a snippet: the clipboard where the browser offers it (secure contexts), else a selection. */
import { announce } from "./dom.js";

export async function copyText(text: string, source: HTMLElement): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    announce("Copied");
    return;
  } catch {}
  // Plain http on another host is no secure context: select the text, for Ctrl+C.
  const range = document.createRange();
  range.selectNodeContents(source);
  const sel = getSelection();
  sel?.removeAllRanges();
  sel?.addRange(range);
  announce("Selected: press Ctrl+C to copy");
}
