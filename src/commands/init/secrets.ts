/** @module Telling credentials apart from other values, and spelling any text as an environment variable. */

/** Keys whose values are credentials (GIT_AUTHOR_NAME is not). */
const SECRET_KEY = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|AUTH(?!OR)|CREDENTIAL|COOKIE|(^|[_-])PAT([_-]|$)/i;
/** Values that are credentials whatever their key says: well-known token shapes. */
const SECRET_VALUE =
  /^(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|sk-[\w-]{20,}|sk_(live|test)_\w{16,}|xox[abprs]-[\w-]{10,}|AKIA[0-9A-Z]{16}|AIza[\w-]{30,}|glpat-[\w-]{20,})$/;

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

export function looksLikeSecret(value: string): boolean {
  return SECRET_VALUE.test(value.trim());
}

/** `brave search` → `BRAVE_SEARCH`: an environment-variable spelling of any text. */
export function envName(text: string): string {
  const s = text
    .replace(/[^A-Za-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .toUpperCase();
  if (!s) return "VALUE";
  return /^[0-9]/.test(s) ? `_${s}` : s;
}
