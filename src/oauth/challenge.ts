/** @module Pure: reads the `WWW-Authenticate` header (RFC 9110 §11.6.1) and picks out the Bearer challenge. */

interface Challenge {
  readonly scheme: string;
  /** Parameter names lower-cased; values unquoted. */
  readonly params: Readonly<Record<string, string>>;
}

/** The Bearer challenge's parameters the OAuth client acts on (RFC 6750 §3, RFC 9728 §5.1). */
export interface BearerChallenge {
  readonly resourceMetadata?: string;
  readonly scope?: readonly string[];
  readonly error?: string;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+/;

/** Every challenge in the header, in order; a malformed tail ends the parse rather than throwing. */
function parseChallenges(header: string): Challenge[] {
  const out: Challenge[] = [];
  let rest = header;
  const skip = (re: RegExp) => {
    rest = rest.replace(re, "");
  };
  skip(/^[\s,]+/);
  while (rest.length) {
    const scheme = TOKEN.exec(rest)?.[0];
    if (!scheme) break;
    rest = rest.slice(scheme.length);
    const params: Record<string, string> = {};
    // token68 form (e.g. `Basic abc==`): not used by Bearer challenges; skip it.
    const t68 = /^\s+[A-Za-z0-9\-._~+/]+=*\s*(,|$)/.exec(rest);
    if (t68) rest = rest.slice(t68[0].length);
    for (;;) {
      const m = /^[\s,]*([!#$%&'*+\-.^_`|~0-9A-Za-z]+)\s*=\s*/.exec(rest);
      if (!m) break;
      rest = rest.slice(m[0].length);
      let value: string;
      if (rest.startsWith('"')) {
        let i = 1;
        value = "";
        while (i < rest.length && rest[i] !== '"') {
          if (rest[i] === "\\" && i + 1 < rest.length) i++;
          value += rest[i];
          i++;
        }
        rest = rest.slice(i + 1);
      } else {
        value = TOKEN.exec(rest)?.[0] ?? "";
        rest = rest.slice(value.length);
      }
      params[m[1]!.toLowerCase()] = value;
    }
    out.push({ scheme, params });
    skip(/^[\s,]+/);
  }
  return out;
}

/** The Bearer challenge of a header, or undefined when the upstream sent none. */
export function bearerChallenge(header: string): BearerChallenge | undefined {
  const c = parseChallenges(header).find((x) => x.scheme.toLowerCase() === "bearer");
  if (!c) return undefined;
  const scope = c.params.scope?.split(/\s+/).filter(Boolean);
  return {
    ...(c.params.resource_metadata ? { resourceMetadata: c.params.resource_metadata } : {}),
    ...(scope?.length ? { scope } : {}),
    ...(c.params.error ? { error: c.params.error } : {}),
  };
}
