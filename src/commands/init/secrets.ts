/**
 * @module The variables a written file refers to: secret values found in the client file get names once every
 * server has been read (so that a clash can prefix both sides), references the client already made are kept.
 */
import type { Variable } from "./types.js";

/** `brave search` → `BRAVE_SEARCH`: an environment-variable spelling of any text. */
export function envName(text: string): string {
  const s = text
    .replace(/[^A-Za-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .toUpperCase();
  if (!s) return "VALUE";
  return /^[0-9]/.test(s) ? `_${s}` : s;
}

/**
 * Variables every shell or desktop session has: kept as references (`${HOME}`), never listed as ones to set,
 * never given to a secret.
 */
export const STANDARD_VARIABLES: ReadonlySet<string> = new Set([
  "HOME",
  "PATH",
  "USER",
  "LOGNAME",
  "SHELL",
  "PWD",
  "TMPDIR",
  "TEMP",
  "TMP",
  "LANG",
  "TERM",
  "USERPROFILE",
  "APPDATA",
  "LOCALAPPDATA",
  "PROGRAMDATA",
  "XDG_CONFIG_HOME",
  "XDG_DATA_HOME",
  "XDG_CACHE_HOME",
  "XDG_STATE_HOME",
  "XDG_RUNTIME_DIR",
]);

/** A hole stands for secret number `n` in a string until the names are known. */
const hole = (n: number) => `\u0000${n}\u0000`;
// biome-ignore lint/suspicious/noControlCharactersInRegex: holes are delimited by NUL
const HOLES = /\u0000(\d+)\u0000/g;

type Use =
  | { readonly secret: number; readonly where: string; readonly server: string }
  | {
      readonly name: string;
      readonly kind: "input" | "env";
      readonly where: string;
      readonly server: string;
    };

/** Every variable use of a conversion, in order; secrets are named by `finish`. */
export class VariableBook {
  private readonly uses: Use[] = [];
  private readonly secrets: { value: string; candidates: string[] }[] = [];
  private readonly reserved = new Set<string>(STANDARD_VARIABLES);
  private names: string[] = [];

  /**
   * A secret value and the names it may take, best first (`API_KEY`, then `SERVER_API_KEY`). Returns the hole
   * to put where the value was.
   */
  secret(value: string, candidates: readonly string[], where: string, server: string): string {
    const names = [...new Set(candidates.map((c) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(c) ? c : envName(c))))];
    this.secrets.push({ value, candidates: names });
    this.uses.push({ secret: this.secrets.length - 1, where, server });
    return hole(this.secrets.length - 1);
  }

  /** A reference the client file made (`${env:X}`, `${input:x}`, `${X}`): its name is never a secret's. */
  reference(name: string, kind: "input" | "env", where: string, server: string): void {
    this.reserved.add(name);
    this.uses.push({ name, kind, where, server });
  }

  /** A name a secret must not take (`${X:-default}` in the client file). */
  reserve(name: string): void {
    this.reserved.add(name);
  }

  /**
   * Names every secret: the first candidate when every secret that wants it has the same value; when values
   * differ, each moves to its next candidate (server-prefixed); numbering (`_2`) only when a server has two
   * different values for its last candidate.
   */
  finish(): { variables: Map<string, Variable>; needs: Map<string, string[]> } {
    const choice = this.secrets.map(() => 0);
    const RESERVED = Symbol("reserved");
    const nameOf = (i: number) => this.secrets[i]!.candidates[choice[i]!]!;
    const holders = () => {
      const by = new Map<string, { values: Set<string | symbol>; members: number[] }>();
      this.secrets.forEach((s, i) => {
        const n = nameOf(i);
        const h = by.get(n) ?? { values: new Set(this.reserved.has(n) ? [RESERVED] : []), members: [] };
        h.values.add(s.value);
        h.members.push(i);
        by.set(n, h);
      });
      return by;
    };
    for (let changed = true; changed; ) {
      changed = false;
      for (const h of holders().values()) {
        if (h.values.size < 2) continue;
        for (const i of h.members) {
          if (choice[i]! < this.secrets[i]!.candidates.length - 1) {
            choice[i]!++;
            changed = true;
          }
        }
      }
    }
    this.names = this.secrets.map((_, i) => nameOf(i));
    const taken = new Set([...this.reserved, ...this.names]);
    for (const [name, h] of holders()) {
      if (h.values.size < 2) continue;
      const given = new Map<string | symbol, string>();
      for (const value of h.values) {
        let n = given.size ? 2 : 0;
        while (n && taken.has(`${name}_${n}`)) n++;
        given.set(value, n ? `${name}_${n}` : name);
        taken.add(given.get(value)!);
      }
      for (const i of h.members) this.names[i] = given.get(this.secrets[i]!.value)!;
    }
    const variables = new Map<string, Variable>();
    const needs = new Map<string, string[]>();
    for (const u of this.uses) {
      const name = "secret" in u ? this.names[u.secret]! : u.name;
      const v = variables.get(name);
      if (v) {
        if (!v.where.includes(u.where)) v.where.push(u.where);
      } else if ("secret" in u) {
        variables.set(name, { name, kind: "secret", where: [u.where], value: this.secrets[u.secret]!.value });
      } else variables.set(name, { name, kind: u.kind, where: [u.where] });
      const list = needs.get(u.server) ?? [];
      if (!list.includes(name)) list.push(name);
      needs.set(u.server, list);
    }
    return { variables, needs };
  }

  /** A string with its holes replaced by `${NAME}` (after `finish`). */
  fill(s: string): string {
    return s.replace(HOLES, (_, n: string) => `\${${this.names[Number(n)]}}`);
  }
}
