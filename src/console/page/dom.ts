/**
 * @module Building the page's elements: text is only ever a text node, attributes are set one by one, and no event
 * handler or URL comes from an attribute string. With the page's Trusted Types policy, an HTML string could not be
 * assigned anywhere even by mistake: nothing an upstream wrote can become markup.
 */

export type Child = Node | string | number | null | undefined | false;
export type Attrs = Record<string, string | number | boolean | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) setAttr(el, k, v);
  append(el, children);
  return el;
}

export function setAttr(el: Element, name: string, value: string | number | boolean | undefined): void {
  if (/^on/i.test(name) || name === "href" || name === "src" || name === "style")
    throw new Error(`attribute ${name} is not set from a string here`);
  if (value === undefined || value === false) el.removeAttribute(name);
  else el.setAttribute(name, value === true ? "" : String(value));
}

function append(el: Element, children: readonly Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
  }
}

/** Replaces an element's content (text nodes for strings). */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/** A link to an http(s) URL only (an upstream's authorization page); anything else is shown as text. */
export function link(url: string, text: string): HTMLElement {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url, location.href);
  } catch {}
  if (!parsed || (parsed.protocol !== "https:" && parsed.protocol !== "http:")) return h("code", {}, url);
  const a = h("a", { rel: "noopener noreferrer", target: "_blank" }, text);
  a.href = parsed.href;
  return a;
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} is missing from the page`);
  return el as T;
}

/** Says something to screen readers (the page's polite live region). */
export function announce(text: string): void {
  const region = byId("announce");
  region.textContent = "";
  // A change of text after a tick is announced even when the text repeats.
  setTimeout(() => {
    region.textContent = text;
  }, 30);
}

/** ≈tokens, as people read them: 1,234 or 12.3k (by hand: the first toLocaleString loads locale data, ~40 ms). */
export function tokens(n: number): string {
  return n >= 10_000 ? `${(n / 1000).toFixed(1)}k` : String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}
