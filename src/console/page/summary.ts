/**
 * @module The selection at a glance: its URL in the shortest spelling, what it costs per turn beside every toolset
 * on and everything deferred, and the tools it lists.
 */
import type { Figure } from "../wire.js";
import { byId, fill, h, tokens } from "./dom.js";
import type { Model } from "./model.js";

function bar(label: string, f: Figure, max: number, kind: string): HTMLElement {
  const fillEl = h("span", { class: `bar-fill bar-${kind}` });
  // CSSOM, not a style attribute: the page's CSP allows no inline style.
  fillEl.style.width = `${max ? Math.max(0.5, (100 * f.approx_tokens) / max) : 0}%`;
  return h(
    "div",
    { class: "bar-row", "data-cost": kind },
    h("span", { class: "bar-label" }, label),
    h("span", { class: "bar", "aria-hidden": "true" }, fillEl),
    h(
      "span",
      { class: "bar-value" },
      `≈${tokens(f.approx_tokens)} tokens · ${f.tools} tool${f.tools === 1 ? "" : "s"}`,
    ),
  );
}

/** What the selection saves a client per turn against every toolset on (nothing when it does not). */
function saving(selection: Figure, everything: Figure): HTMLElement | null {
  const saved = everything.approx_tokens - selection.approx_tokens;
  if (saved <= 0 || everything.approx_tokens === 0) return null;
  const share = Math.round((100 * saved) / everything.approx_tokens);
  return h(
    "p",
    { class: "hint", id: "saving" },
    `Saves ≈${tokens(saved)} tokens a turn (${share}%) against every toolset on.`,
  );
}

export function drawSummary(model: Model): void {
  const p = model.payload!;
  const { selection, everything, deferred, unknown } = p.costs;
  const max = Math.max(selection.approx_tokens, everything.approx_tokens, deferred.approx_tokens);
  fill(
    byId("costs"),
    bar("This selection", selection, max, "selection"),
    bar("Every toolset on", everything, max, "everything"),
    bar("Everything deferred", deferred, max, "deferred"),
    saving(selection, everything),
    unknown.length
      ? h("p", { class: "hint" }, `Not counted (their upstreams have not listed yet): ${unknown.join(", ")}.`)
      : null,
  );
  byId("url").textContent = model.url();
  const named = byId("unknown");
  named.textContent = p.report.unknown.length
    ? `Not toolsets of this server (served around, left out of the URL): ${p.report.unknown.join(", ")}.`
    : "";
  named.hidden = p.report.unknown.length === 0;
  const names = p.report.tools ?? [];
  fill(
    byId("selected-tools"),
    h("summary", {}, `${names.length} tool${names.length === 1 ? "" : "s"} in this selection`),
    h(
      "ul",
      { id: "selected-tool-names", class: "inline-list" },
      ...names.map((n) => h("li", {}, h("code", {}, n))),
    ),
  );
}
