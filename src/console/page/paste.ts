/**
 * @module What to paste into each client for the selection (src/console/snippets.ts writes the text). Blocks are
 * made once and their text replaced as switches move.
 */
import { clientKey, clientSnippets, type Snippet } from "../snippets.js";
import { copyText } from "./copy.js";
import { byId, fill, h } from "./dom.js";
import type { Model } from "./model.js";

const blocks = new Map<string, { code: HTMLElement; where: HTMLElement; note: HTMLElement }>();

function block(s: Snippet): HTMLElement {
  const code = h("code", { id: `snippet-${s.id}` });
  const where = h("p", { class: "hint" });
  const note = h("p", { class: "hint note" });
  const copy = h(
    "button",
    { type: "button", class: "secondary copy", "aria-label": `Copy the ${s.title} config` },
    "Copy",
  );
  copy.addEventListener("click", () => void copyText(code.textContent ?? "", code));
  blocks.set(s.id, { code, where, note });
  return h(
    "section",
    {
      class: "snippet",
      "data-snippet": s.id,
      "data-transport": s.transport,
      "aria-labelledby": `snippet-${s.id}-h`,
    },
    h("div", { class: "snippet-head" }, h("h3", { id: `snippet-${s.id}-h` }, s.title), copy),
    where,
    h("pre", { tabindex: "0", class: `pre-${s.kind}`, "aria-labelledby": `snippet-${s.id}-h` }, code),
    note,
  );
}

export function drawPaste(model: Model): void {
  const p = model.payload!;
  const snippets = clientSnippets({
    name: clientKey(p.server.name),
    url: model.url(),
    plainQuery: model.plainQuery(),
    token: p.server.auth === "token",
    stdio: p.server.stdio ?? undefined,
    gated: model.gated(),
  });
  const list = byId("snippets");
  if (snippets.map((s) => s.id).join() !== [...blocks.keys()].join()) {
    blocks.clear();
    fill(list, ...snippets.map(block));
  }
  for (const s of snippets) {
    const b = blocks.get(s.id)!;
    b.code.textContent = s.text;
    b.where.textContent = `Paste into ${s.where}.`;
    b.note.textContent = s.note ?? "";
    b.note.hidden = !s.note;
  }
  byId("stdio-missing").hidden = p.server.stdio !== null;
}

export function wireUrlCopy(): void {
  const button = byId("copy-url");
  button.addEventListener("click", () => void copyText(byId("url").textContent ?? "", byId("url")));
}
