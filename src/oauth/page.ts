/** @module The small pages a browser sees during an authorization: the start page's question, done, or why not. */

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** Headers for every flow page: nothing cached, nothing framed, no referrer (the URL carried a code). */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
};

const STYLE =
  "body{font:16px/1.5 system-ui,sans-serif;max-width:36em;margin:4em auto;padding:0 1em}button{font:inherit;padding:.4em 1em}input{font:inherit}";

function html(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>${STYLE}</style></head>
<body><h1>${escapeHtml(title)}</h1>${body}</body></html>
`;
}

const paragraphs = (texts: readonly string[]) => texts.map((t) => `<p>${escapeHtml(t)}</p>`).join("");

function page(title: string, text: string): string {
  return html(title, paragraphs([text]));
}

/** A question with one button: the form posts back to `action` (the page's own URL) with `fields`. */
export interface PageForm {
  readonly action: string;
  readonly fields: Readonly<Record<string, string>>;
  readonly button: string;
  /** A password field of this name (an administrator's toolpacks token), never echoed back. */
  readonly secret?: { readonly name: string; readonly label: string };
}

export function formPage(title: string, texts: readonly string[], form: PageForm): string {
  const hidden = Object.entries(form.fields)
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
    .join("");
  const secret = form.secret
    ? `<p><label>${escapeHtml(form.secret.label)}<br><input type="password" name="${escapeHtml(form.secret.name)}" autocomplete="off" required size="40"></label></p>`
    : "";
  return html(
    title,
    `${paragraphs(texts)}<form method="post" action="${escapeHtml(form.action)}">${hidden}${secret}<p><button type="submit">${escapeHtml(form.button)}</button></p></form>`,
  );
}

export const donePage = (upstream: string) =>
  page("Done", `toolpacks can now use ${upstream} for you. You can close this window.`);

export const failedPage = (message: string) => page("Authorization failed", message);
