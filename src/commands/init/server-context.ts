/**
 * @module One server's strings turned into toolpacks strings: client variables become `${VAR}`, and the secret
 * parts that detect.ts finds become references to variables named after what they fill.
 */
import { findSecrets, isSecretKey, type Part } from "./detect.js";
import { envName, type VariableBook } from "./secrets.js";
import type { InitPlan } from "./types.js";

/** What a value fills: an env entry (`KEY=value` arguments too), a header, a command-line flag, or nothing. */
export type Owner =
  | { readonly kind: "env" | "header" | "flag"; readonly key: string }
  | { readonly kind: "none" };

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const AUTHORIZATION = /^(proxy-)?authorization$/i;
/** What a structured value's name ends with, dropped before a part's name is added (`DATABASE_URL` → `DATABASE_PASSWORD`). */
const ADDRESS_SUFFIX =
  /(^|_)(URL|URI|DSN|ENDPOINT|CONNECTION_STRING|CONN_STRING|CONNECTION|CONN|ADDRESS|ADDR|SERVER)$/;

/** A header whose value is a credential: `Authorization`, `Proxy-Authorization`, or a secret-named one. */
const isSecretHeader = (name: string) => AUTHORIZATION.test(name) || isSecretKey(name);

/** One server's conversion: its strings, secrets and notes. */
export class ServerContext {
  readonly notes: string[] = [];
  readonly prefix: string;

  constructor(
    readonly name: string,
    private readonly plan: InitPlan,
    private readonly book: VariableBook,
  ) {
    this.prefix = envName(name);
  }

  /**
   * The variable names a secret part may take, best first. Env keys and headers name their variable
   * (`GITHUB_TOKEN`, `X-Api-Key` → `X_API_KEY`), server-prefixed when another server has a different value
   * under the same name; `Authorization` is `<SERVER>_TOKEN` (`<SERVER>_BASIC_AUTH` for Basic); flags and
   * bare values are always server-prefixed (`--api-key` → `BRAVE_API_KEY`, a token in an argument →
   * `<SERVER>_TOKEN`); parts of a URL add what they are (`_PASSWORD`, the query key, `_URL_KEY`).
   */
  private candidates(part: Part, owner: Owner, raw: string): string[] {
    const P = this.prefix;
    if (owner.kind === "header" && AUTHORIZATION.test(owner.key)) {
      const proxy = /^proxy/i.test(owner.key) ? "PROXY_" : "";
      return [`${P}_${proxy}${/^basic\s/i.test(raw.trim()) ? "BASIC_AUTH" : "TOKEN"}`];
    }
    const own = owner.kind === "env" || owner.kind === "header";
    const base =
      owner.kind === "none"
        ? P
        : owner.kind === "flag"
          ? `${P}_${envName(owner.key)}`
          : owner.kind === "env" && ENV_NAME.test(owner.key)
            ? owner.key
            : envName(owner.key);
    // A name that already starts with the server's (`GITHUB_TOKEN` of `github`) is its own prefixed form.
    const withPrefix = (n: string) => (own && !n.startsWith(`${P}_`) ? [n, `${P}_${n}`] : [n]);
    if (part.kind === "value" || part.kind === "token")
      return owner.kind === "none" ? [`${P}_TOKEN`] : withPrefix(base);
    const what =
      part.kind === "password"
        ? "PASSWORD"
        : part.kind === "user"
          ? "TOKEN"
          : part.kind === "path"
            ? "URL_KEY"
            : envName(part.key.replace(/([a-z0-9])([A-Z])/g, "$1_$2"));
    const stem = owner.kind === "none" ? P : base.replace(ADDRESS_SUFFIX, "");
    return withPrefix(`${stem || P}_${what}`);
  }

  /** A client string → a toolpacks string, its secret parts (what `findSecrets` finds) replaced. */
  value(raw: string, where: string, owner: Owner = { kind: "none" }, secretKey = false): string {
    const found = findSecrets(raw, secretKey);
    let s = "";
    let last = 0;
    for (const f of found) {
      const detail =
        f.part.kind === "password"
          ? " password"
          : f.part.kind === "param"
            ? ` ${f.part.key}`
            : f.part.kind === "path"
              ? " url path"
              : "";
      s += raw.slice(last, f.start);
      s += this.book.secret(
        raw.slice(f.start, f.end),
        this.candidates(f.part, owner, raw),
        `${where}${detail}`,
        this.name,
      );
      last = f.end;
    }
    return this.text(s + raw.slice(last), where);
  }

  /** A header's value: the whole of it a credential when the header is secret-named (its scheme kept). */
  header(key: string, raw: string, where: string): string {
    return this.value(raw, where, { kind: "header", key }, isSecretHeader(key));
  }

  /** An env entry's value (also `KEY=value` arguments, as `docker run -e` takes them). */
  env(key: string, raw: string, where: string): string {
    return this.value(raw, where, { kind: "env", key }, isSecretKey(key));
  }

  /**
   * Client variables in a string: `${env:X}` → `${X}`; `${input:x}` → `${X}`; `${userHome}` → `${HOME}`;
   * `${workspaceFolder}` → `.`; `${X}` and `${X:-d}` stay references; other `${…}` are kept literally; a
   * literal `$` before `$` or `{` is doubled; holes are left for the book to fill.
   */
  private text(raw: string, where: string): string {
    let out = "";
    let last = 0;
    const literal = (s: string) => s.replace(/\$(?=[${])/g, "$$$$");
    for (const m of raw.matchAll(/\$\{([^}]*)\}/g)) {
      out += literal(raw.slice(last, m.index));
      last = m.index + m[0].length;
      const inner = m[1]!;
      const envRef = /^env:([A-Za-z_][A-Za-z0-9_]*)$/.exec(inner);
      const own = /^([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?$/.exec(inner);
      if (envRef) {
        this.book.reference(envRef[1]!, "env", where, this.name);
        out += `\${${envRef[1]}}`;
      } else if (inner.startsWith("input:")) {
        const name = envName(inner.slice("input:".length));
        this.book.reference(name, "input", where, this.name);
        out += `\${${name}}`;
      } else if (inner === "userHome") {
        this.book.reference("HOME", "env", where, this.name);
        out += "${HOME}";
      } else if (inner === "workspaceFolder" || inner === "workspaceRoot") {
        out += ".";
        const note = `\${${inner}} became "." (this file's folder)`;
        if (!this.notes.includes(note)) this.notes.push(note);
      } else if (own) {
        if (own[2]) this.book.reserve(own[1]!);
        else this.book.reference(own[1]!, "env", where, this.name);
        out += m[0];
      } else {
        out += literal(m[0]);
        this.plan.warnings.push(`${where}: \${${inner}} is not an environment variable; kept as text`);
      }
    }
    return out + literal(raw.slice(last));
  }

  /**
   * Arguments: `--api-key=x` and `--token x` (secret-named flags), `KEY=x` (docker -e), `Authorization:
   * Bearer x` (mcp-remote --header), and anything else by its shape (URLs, tokens).
   */
  args(raw: readonly string[]): string[] {
    const out: string[] = [];
    const where = `${this.name} args`;
    const headerLine = (a: string) => {
      const m = /^([A-Za-z][A-Za-z0-9-]*):(\s*)(.*)$/s.exec(a);
      return m && isSecretHeader(m[1]!) ? m : null;
    };
    for (let i = 0; i < raw.length; i++) {
      const a = raw[i]!;
      const flag = /^(--?)([A-Za-z][\w.-]*)(?:=(.*))?$/s.exec(a);
      const assign = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(a);
      const line = headerLine(a);
      if (flag && flag[3] !== undefined) {
        const head = `${flag[1]}${flag[2]}=`;
        const inner = headerLine(flag[3]);
        out.push(
          inner
            ? `${head}${inner[1]}:${inner[2]}${this.header(inner[1]!, inner[3]!, `${where} ${inner[1]}`)}`
            : `${head}${this.value(flag[3], `${where} ${flag[1]}${flag[2]}`, { kind: "flag", key: flag[2]! }, isSecretKey(flag[2]!))}`,
        );
      } else if (flag && isSecretKey(flag[2]!) && i + 1 < raw.length && !raw[i + 1]!.startsWith("-")) {
        out.push(this.text(a, where));
        out.push(this.value(raw[++i]!, `${where} ${a}`, { kind: "flag", key: flag[2]! }, true));
      } else if (line) {
        out.push(`${line[1]}:${line[2]}${this.header(line[1]!, line[3]!, `${where} ${line[1]}`)}`);
      } else if (assign) {
        out.push(`${assign[1]}=${this.env(assign[1]!, assign[2]!, `${where} ${assign[1]}`)}`);
      } else out.push(this.value(a, where));
    }
    return out;
  }
}
