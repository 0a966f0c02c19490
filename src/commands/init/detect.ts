/**
 * @module Finding credentials in a client file's strings: secret-named keys, well-known token shapes,
 * passwords and keys inside URLs, `Bearer …` schemes, secret `key=value` pairs and long high-entropy runs.
 * Pure: it says where the secret parts of a string are; naming and replacing them is the caller's.
 */

/** Words of a key that make its value a credential (`X-Api-Key`, `GITHUB_TOKEN`, `apiKey`, `PGPASSWORD`). */
const SECRET_WORD =
  /^(API|ACCESS|SECRET|PRIVATE|AUTH|REFRESH|BEARER|CLIENT|MASTER|APP|SESSION|PG|DB)?(KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIALS?|COOKIE)$|^(AUTH|AUTHORIZATION|PASS|PWD|PW|PAT|CREDS|SIG|SIGNATURE|BEARER)$/;
/** Last words that make a key name a setting about a credential, not the credential (`TOKEN_URL`, `MAX_TOKENS` has no secret word). */
const SETTING_WORD =
  /^(URL|URI|ENDPOINT|HOST|HOSTNAME|PORT|PATH|FILE|DIR|DIRECTORY|TYPE|MODE|ENABLED|DISABLED|LIMIT|TTL|TIMEOUT|EXPIRY|EXPIRES|EXPIRATION|LENGTH|SIZE|COUNT|ID|NAME|FORMAT|ALGORITHM|ALG|SCOPE|SCOPES|PROVIDER|ISSUER|AUDIENCE|METHOD|VERSION|REGION|LOCATION|STRATEGY|PREFIX|KIND|ENV|VAR|FIELD|PARAM|USER|USERNAME|EMAIL|LOGIN|DOMAIN|REALM|TENANT)$/;

/** The words of a key: `X-Api-Key` → X API KEY; `apiKey` → API KEY; `GITHUB_PERSONAL_ACCESS_TOKEN`. */
function words(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.toUpperCase());
}

/**
 * Whether a key (env name, header, flag, query parameter) names a credential: one of its words is a secret
 * word and its last word is not a setting word. `GIT_AUTHOR_NAME`, `MAX_TOKENS`, `TOKEN_URL`, `CLIENT_ID`
 * and `PASSWORD_FILE` are not secret keys.
 */
export function isSecretKey(key: string): boolean {
  const w = words(key);
  return w.some((x) => SECRET_WORD.test(x)) && !SETTING_WORD.test(w.at(-1) ?? "");
}

/** Well-known token shapes, matched anywhere in a string between non-token characters. */
const SHAPES = [
  "gh[pousr]_[A-Za-z0-9]{20,}",
  "github_pat_[A-Za-z0-9_]{20,}",
  "sk-(?:ant-|proj-)?(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{20,}",
  "(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}",
  "xox[abposr]-[A-Za-z0-9-]{10,}",
  "(?:AKIA|ASIA)[0-9A-Z]{16}",
  "AIza[A-Za-z0-9_-]{30,}",
  "glpat-[A-Za-z0-9_-]{20,}",
  "shp(?:at|ss|ca|pa)_[A-Fa-f0-9]{32}",
  "npm_[A-Za-z0-9]{30,}",
  "hf_[A-Za-z0-9]{30,}",
  "ntn_[A-Za-z0-9]{30,}",
  "lin_api_[A-Za-z0-9]{30,}",
  "eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]*",
].join("|");
const SHAPE_ANYWHERE = new RegExp(`(?<![A-Za-z0-9_-])(?:${SHAPES})(?![A-Za-z0-9_-])`, "g");
const SHAPE_WHOLE = new RegExp(`^(?:${SHAPES})$`);
/** 32+ hex characters with letters and digits, one case: a key (in a URL path or alone; not in a file path). */
const HEX_KEY = /^(?=.*[0-9])(?=.*[a-f])[0-9a-f]{32,}$|^(?=.*[0-9])(?=.*[A-F])[0-9A-F]{32,}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Shannon entropy in bits per character. */
function entropy(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) h -= (n / s.length) * Math.log2(n / s.length);
  return h;
}

const charClass = (c: string) => (/[a-z]/.test(c) ? 0 : /[A-Z]/.test(c) ? 1 : /[0-9]/.test(c) ? 2 : 3);

/**
 * A long random-looking run: 32+ hex characters with letters and digits, or 20+ characters holding lower
 * case, upper case and digits, with entropy ≥ 3.5 bits a character, a class change (lower, upper, digit,
 * other) at ≥ 30% of its positions, and not made of words: words (3+ lower-case letters after an optional
 * capital, or a 3+ capital word between `_`) hold under 60% of its letters (`MyVeryLongServerName2024`,
 * `Root_Certification_RSA_R2` are words; a random token seldom is).
 * UUIDs are identifiers, not secrets.
 */
function isHighEntropy(s: string): boolean {
  if (s.length < 20 || UUID.test(s)) return false;
  const digit = /[0-9]/.test(s);
  if (/^[0-9a-f]+$|^[0-9A-F]+$/.test(s)) return HEX_KEY.test(s);
  if (!digit || !/[a-z]/.test(s) || !/[A-Z]/.test(s)) return false;
  let switches = 0;
  for (let i = 1; i < s.length; i++) if (charClass(s[i]!) !== charClass(s[i - 1]!)) switches++;
  const letters = s.replace(/[^A-Za-z]/g, "").length;
  const inWords = (s.match(/[A-Z]?[a-z]{3,}|(?<=^|_)[A-Z]{3,}(?=_|$)/g) ?? []).join("").length;
  return entropy(s) >= 3.5 && switches / (s.length - 1) >= 0.3 && inWords / letters < 0.6;
}

/** What a secret part is, for naming its variable. */
export type Part =
  /** The whole value, or the credential after a `Bearer`/`Basic`/`Token` scheme. */
  | { readonly kind: "value" }
  /** `user:PASSWORD@` in a URL. */
  | { readonly kind: "password" }
  /** `TOKEN@host` in a URL (a user name that is a token). */
  | { readonly kind: "user" }
  /** A query (or fragment) parameter of a URL, or a `key=value` pair (`Password=…;` in a connection string). */
  | { readonly kind: "param"; readonly key: string }
  /** A segment of a URL's path. */
  | { readonly kind: "path" }
  /** A token shape or high-entropy run inside other text. */
  | { readonly kind: "token" };

/** A secret part of a string: `value.slice(start, end)`. */
export interface Finding {
  readonly start: number;
  readonly end: number;
  readonly part: Part;
}

const SCHEME = /^(Bearer|Basic|Token|Bot|Digest|ApiKey)(\s+)(\S+)$/i;
/** Outside a secret-named key, `Bearer x` is a credential when x does not read as a word (a digit or symbol). */
const SCHEME_CREDENTIAL = /^(?=.*[0-9._~+/=-])\S{6,}$/;
const BOOLEAN = /^(true|false|yes|no|on|off|enabled|disabled|none|null)$/i;
const PATH = /^(?:(?:~|\.{1,2})?\/|[A-Za-z]:[\\/])[^\s:]*$/;
/**
 * A URL ends where a connection string's next field starts (`Endpoint=sb://h/;SharedAccessKey=…`): the fields
 * after it are pairs of their own, not a path segment of the URL.
 */
const URL_ANYWHERE = /[A-Za-z][A-Za-z0-9+.-]*:\/\/(?:(?!;\s*(?:[A-Za-z_][\w .-]*=|$))[^\s"'<>`|\\^\]])+/g;
const REFERENCE = /\$\{[^}]*\}/g;

/** Query parameters that carry credentials besides secret-named ones (`sig`, `X-Amz-Signature`, `code`). */
const isSecretParam = (key: string) => isSecretKey(key) || /(^|[_.-])(sig|signature)$/i.test(key);
/** A URL part or parameter value that is a credential by its shape alone. */
const tokenish = (s: string) => s.length >= 8 && (SHAPE_WHOLE.test(s) || isHighEntropy(s));

/** The secret parts of one URL found at `at` in the text. */
function urlFindings(url: string, at: number): Finding[] {
  const out: Finding[] = [];
  const m = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/.exec(url);
  if (!m) return out;
  const head = m[1]!.length;
  const authority = m[2]!;
  const userEnd = authority.lastIndexOf("@");
  if (userEnd >= 0) {
    const userinfo = authority.slice(0, userEnd);
    const colon = userinfo.indexOf(":");
    const user = colon < 0 ? userinfo : userinfo.slice(0, colon);
    if (user && tokenish(user))
      out.push({ start: at + head, end: at + head + user.length, part: { kind: "user" } });
    if (colon >= 0 && colon < userinfo.length - 1)
      out.push({ start: at + head + colon + 1, end: at + head + userEnd, part: { kind: "password" } });
  }
  let pos = at + head + authority.length;
  const rest = m[3]!;
  const q = rest.search(/[?#]/);
  const path = q < 0 ? rest : rest.slice(0, q);
  for (const seg of path.split("/")) {
    if (tokenish(seg)) out.push({ start: pos, end: pos + seg.length, part: { kind: "path" } });
    pos += seg.length + 1;
  }
  if (q < 0) return out;
  pos = at + head + authority.length + q + 1;
  for (const pair of rest.slice(q + 1).split(/[&;#]/)) {
    const eq = pair.indexOf("=");
    const key = eq < 0 ? "" : pair.slice(0, eq);
    const value = eq < 0 ? "" : pair.slice(eq + 1);
    if (key && value && (isSecretParam(key) || tokenish(value)))
      out.push({ start: pos + eq + 1, end: pos + pair.length, part: { kind: "param", key } });
    pos += pair.length + 1;
  }
  return out;
}

/**
 * Runs that could be tokens (base64 alphabet). In a file path (a word that starts with `/`, `~/`, `./`, `C:\`,
 * or has one after `=`; or a run with `/` and a segment that is a word: `src`, `Users`) runs are looked at
 * segment by segment, and only token shapes count there (folder names and content hashes are long too). A hex digest (`sha256:…`) or
 * git commit (`repo#a94a8fe…`) is not a secret.
 */
function runFindings(text: string, from: number): Finding[] {
  const out: Finding[] = [];
  for (const m of text.matchAll(/[A-Za-z0-9_+/=-]{20,}/g)) {
    const run = m[0];
    const before = text.slice(0, m.index);
    if (/(sha1|sha256|sha384|sha512):$|#$/i.test(before) && /^[0-9a-f]+$/i.test(run)) continue;
    const word = before.slice(before.search(/\S*$/)) + text.slice(m.index).match(/^\S*/)![0];
    const pathy =
      /^(~|\.{1,2})?\/|=(~|\.{1,2})?\/|^[A-Za-z]:[\\/]/.test(word) ||
      (run.includes("/") && run.split("/").some((s) => /^[a-z][a-z_-]{2,}$|^[A-Z][a-z]+$/.test(s)));
    let pos = from + m.index;
    // Words joined by `/` (`ECMA-262/JavaScript`) are not a token; base64 with `/` is 32+ long (AWS: 40).
    const parts = pathy || (run.includes("/") && run.length < 32) ? run.split("/") : [run];
    for (const p of parts) {
      if (pathy ? SHAPE_WHOLE.test(p) : isHighEntropy(p))
        out.push({ start: pos, end: pos + p.length, part: { kind: "token" } });
      pos += p.length + 1;
    }
  }
  return out;
}

/** Where a pair's value ends, by what separates it from the pair before it (see `pairFindings`). */
const VALUE_END: Record<string, RegExp> = {
  field: /;|\s|,(?=\s*[A-Za-z_][\w.-]*\s*=)/,
  query: /[&;#\s]/,
  list: /[,;&\s]/,
};

/**
 * The secret-named `key=value` pairs of a text. A pair after the start, a `;` or white space is a field of a
 * connection string (`Server=db;Password=…`, `Endpoint=…;SharedAccessKey=…`): its value is all of it up to the
 * next `;`, so a value holding `=` or `&` (a SAS token under `SharedAccessSignature=`) is one secret. A pair after
 * `&` or `?` is a query parameter (a bare SAS token, `sv=…&sig=…`), ending at the next `&`; after `,`, an item of
 * a list. Pairs inside a value are found too (a secret field's own are then part of it).
 */
function pairFindings(text: string): Finding[] {
  const out: Finding[] = [];
  for (const m of text.matchAll(/(?<=^|[;,&?\s])([A-Za-z_][\w.-]*)\s*=\s*/g)) {
    const key = m[1]!;
    if (!isSecretParam(key)) continue;
    const before = m.index > 0 ? text[m.index - 1]! : "";
    const kind = before === "&" || before === "?" ? "query" : before === "," ? "list" : "field";
    const start = m.index + m[0].length;
    const rest = text.slice(start);
    const length = rest.search(VALUE_END[kind]!);
    const end = start + (length < 0 ? rest.length : length);
    if (end > start) out.push({ start, end, part: { kind: "param", key } });
  }
  return out;
}

const overlaps = (a: Finding, list: readonly Finding[]) =>
  list.some((b) => a.start < b.end && b.start < a.end);

/** Structured secrets in any text: URLs, a scheme, `key=value` pairs, token shapes, high-entropy runs. */
function scan(value: string): Finding[] {
  // References the client file already uses (`${env:X}`, `${input:x}`) are blanked: never a secret.
  const text = value.replace(REFERENCE, (r) => " ".repeat(r.length));
  const scheme = SCHEME.exec(text);
  if (scheme && SCHEME_CREDENTIAL.test(scheme[3]!)) {
    const start = scheme[1]!.length + scheme[2]!.length;
    return [{ start, end: text.length, part: { kind: "value" } }];
  }
  const found: Finding[] = [];
  const urls: Finding[] = [];
  for (const m of text.matchAll(URL_ANYWHERE)) {
    urls.push({ start: m.index, end: m.index + m[0].length, part: { kind: "token" } });
    found.push(...urlFindings(m[0], m.index));
  }
  const add = (f: Finding) => {
    if (!overlaps(f, found)) found.push(f);
  };
  for (const f of pairFindings(text)) if (!overlaps(f, urls)) add(f);
  for (const m of text.matchAll(SHAPE_ANYWHERE))
    add({ start: m.index, end: m.index + m[0].length, part: { kind: "token" } });
  let last = 0;
  for (const u of [...urls, { start: text.length, end: text.length, part: { kind: "token" } } as Finding]) {
    for (const f of runFindings(text.slice(last, u.start), last)) add(f);
    last = u.end;
  }
  return found.sort((a, b) => a.start - b.start);
}

/**
 * The secret parts of a value. `secretKey`: the value sits under a secret-named key (env, header, flag), so
 * all of it is the credential (after a `Bearer`/`Basic`/`Token` scheme), unless it is empty, uses a
 * reference, is a file path, a boolean word, or a URL (then only the URL's secret parts are).
 */
export function findSecrets(value: string, secretKey: boolean): Finding[] {
  const v = value.trim();
  if (!v) return [];
  if (secretKey && !value.includes("${") && !/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(v)) {
    if (PATH.test(v) || BOOLEAN.test(v)) return [];
    const scheme = SCHEME.exec(value);
    if (scheme) {
      const start = scheme[1]!.length + scheme[2]!.length;
      return [{ start, end: value.length, part: { kind: "value" } }];
    }
    return [{ start: 0, end: value.length, part: { kind: "value" } }];
  }
  const found = scan(value);
  // A value that is one token from end to end is the value, not a token inside it.
  if (
    found.length === 1 &&
    found[0]!.part.kind === "token" &&
    value.slice(found[0]!.start, found[0]!.end) === value
  )
    return [{ start: 0, end: value.length, part: { kind: "value" } }];
  return found;
}
