/**
 * @module One server's strings turned into toolpacks strings: client variables become `${VAR}`, secrets are
 * replaced by references to variables named after where they were found.
 */
import { envName, isSecretKey, looksLikeSecret } from "./secrets.js";
import type { InitPlan, Variable } from "./types.js";

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Part of a value that stands for a secret until the text is escaped; then it becomes `${VAR}`. */
const HOLE = (n: number) => `\u0000${n}\u0000`;

/** One server's conversion: its strings, secrets and notes. */
export class ServerContext {
  readonly needs = new Set<string>();
  readonly notes: string[] = [];
  private readonly holes: string[] = [];
  readonly prefix: string;

  constructor(
    readonly name: string,
    private readonly plan: InitPlan,
  ) {
    this.prefix = envName(name);
  }

  private use(name: string, kind: Variable["kind"], where: string, value?: string): void {
    const v = this.plan.variables.get(name);
    if (v) {
      if (!v.where.includes(where)) v.where.push(where);
    } else
      this.plan.variables.set(name, {
        name,
        kind,
        where: [where],
        ...(value !== undefined ? { value } : {}),
      });
    this.needs.add(name);
  }

  /**
   * Claims a variable for a secret value: the first candidate that is free or already holds the same value,
   * else the last one numbered. Returns a hole to put where the secret was.
   */
  secret(candidates: readonly string[], value: string, where: string): string {
    const names = [...new Set(candidates.map((c) => (ENV_NAME.test(c) ? c : envName(c))))];
    let chosen: string | undefined;
    for (const c of names) {
      const v = this.plan.variables.get(c);
      if (!v || (v.kind === "secret" && v.value === value)) {
        chosen = c;
        break;
      }
    }
    if (!chosen) {
      const last = names.at(-1)!;
      for (let n = 2; !chosen; n++) {
        const v = this.plan.variables.get(`${last}_${n}`);
        if (!v || (v.kind === "secret" && v.value === value)) chosen = `${last}_${n}`;
      }
    }
    this.use(chosen, "secret", where, value);
    this.holes.push(chosen);
    return HOLE(this.holes.length - 1);
  }

  /**
   * A client string → a toolpacks string. `${env:X}` → `${X}`; `${input:x}` → `${X}`; `${userHome}` →
   * `${HOME}`; `${workspaceFolder}` → `.`; `${X}` and `${X:-d}` stay references; other `${…}` are kept
   * literally; a literal `$` before `$` or `{` is doubled; holes become `${VAR}`.
   */
  text(raw: string, where: string): string {
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
        this.use(envRef[1]!, "env", where);
        out += `\${${envRef[1]}}`;
      } else if (inner.startsWith("input:")) {
        const name = envName(inner.slice("input:".length));
        this.use(name, "input", where);
        out += `\${${name}}`;
      } else if (inner === "userHome") {
        this.use("HOME", "env", where);
        out += "${HOME}";
      } else if (inner === "workspaceFolder" || inner === "workspaceRoot") {
        out += ".";
        const note = `\${${inner}} became "." (this file's folder)`;
        if (!this.notes.includes(note)) this.notes.push(note);
      } else if (own) {
        if (!own[2]) this.use(own[1]!, "env", where);
        out += m[0];
      } else {
        out += literal(m[0]);
        this.plan.warnings.push(`${where}: \${${inner}} is not an environment variable; kept as text`);
      }
    }
    out += literal(raw.slice(last));
    // biome-ignore lint/suspicious/noControlCharactersInRegex: holes are delimited by NUL
    return out.replace(/\u0000(\d+)\u0000/g, (_, n: string) => `\${${this.holes[Number(n)]}}`);
  }

  /** Secrets inside URLs (a password in user info, secret-named query parameters) become holes. */
  private urlSecrets(raw: string, where: string): string {
    if (raw.includes("${") || !/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(raw)) return raw;
    let s = raw.replace(
      /^([A-Za-z][A-Za-z0-9+.-]*:\/\/[^:@/\s]+):([^@/\s]+)@/,
      (_, head: string, pass: string) =>
        `${head}:${this.secret([`${this.prefix}_PASSWORD`], pass, `${where} password`)}@`,
    );
    s = s.replace(/([?&])([^=&#\s]+)=([^&#\s]+)/g, (all, sep: string, key: string, value: string) =>
      isSecretKey(key)
        ? `${sep}${key}=${this.secret([`${this.prefix}_${envName(key)}`], value, `${where} query ${key}`)}`
        : all,
    );
    return s;
  }

  /** A value that is itself a secret (the key says so): a literal becomes a reference; a reference stays. */
  secretValue(raw: string, candidates: readonly string[], where: string, scheme = false): string {
    if (raw === "" || raw.includes("${")) return this.text(raw, where);
    const m = scheme ? /^(Bearer|Basic|Token|Bot|Digest)(\s+)(\S.*)$/i.exec(raw) : null;
    if (m) return this.text(`${m[1]}${m[2]}${this.secret(candidates, m[3]!, where)}`, where);
    return this.text(this.secret(candidates, raw, where), where);
  }

  /** Any other string: a value shaped like a known token, and secrets inside URLs, are replaced. */
  plain(raw: string, where: string, candidates: readonly string[] = [`${this.prefix}_TOKEN`]): string {
    if (looksLikeSecret(raw)) return this.secretValue(raw, candidates, where);
    return this.text(this.urlSecrets(raw, where), where);
  }

  /** Arguments: `--api-key=x`, `--token x`, `KEY=x` (docker -e) and URLs are looked at. */
  args(raw: readonly string[]): string[] {
    const out: string[] = [];
    for (let i = 0; i < raw.length; i++) {
      const a = raw[i]!;
      const where = `${this.name} args`;
      const flag = /^(--?)([A-Za-z][\w-]*)(?:=(.*))?$/.exec(a);
      const assign = /^([A-Za-z_][A-Za-z0-9_]*)=(.+)$/.exec(a);
      if (flag && isSecretKey(flag[2]!) && flag[3] !== undefined) {
        const value = this.secretValue(
          flag[3],
          [`${this.prefix}_${envName(flag[2]!)}`],
          `${where} ${flag[1]}${flag[2]}`,
        );
        out.push(`${flag[1]}${flag[2]}=${value}`);
      } else if (flag && isSecretKey(flag[2]!) && i + 1 < raw.length && !raw[i + 1]!.startsWith("-")) {
        out.push(this.text(a, where));
        out.push(this.secretValue(raw[++i]!, [`${this.prefix}_${envName(flag[2]!)}`], `${where} ${a}`));
      } else if (assign && isSecretKey(assign[1]!)) {
        out.push(
          `${assign[1]}=${this.secretValue(assign[2]!, [assign[1]!, `${this.prefix}_${assign[1]}`], `${where} ${assign[1]}`)}`,
        );
      } else out.push(this.plain(a, where));
    }
    return out;
  }
}
