/**
 * @module `toolpacks init --from FILE`: a packs.yaml from a client's MCP server configuration (Claude Desktop,
 * Claude Code, Cursor, VS Code). Secrets are never copied: they become `${VAR}` references.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { resolve as resolvePath } from "node:path";
import type { Command } from "commander";
import { stringify } from "yaml";
import { type CatalogResult, compileTexts } from "../catalog/load.js";
import { NAME_RULE, RESERVED_KEYS, TOOL_NAME_RULE } from "../catalog/names.js";
import { formatConfigError } from "../config/errors.js";
import { silentLogger } from "../log.js";
import { VERSION } from "../version.js";

export const SCHEMA_LINE =
  "# yaml-language-server: $schema=./node_modules/toolpacks/schema/packs.schema.json";

/** Bad input: unreadable, not JSON, no servers. Exit 1. */
export class InitInputError extends Error {}

// ---------------------------------------------------------------------------------------------------------
// Reading the client file

/**
 * JSON with comments (`//`, `/* *\/`) and trailing commas, as VS Code settings allow. Comments and dropped
 * commas become spaces so that positions in parse errors still point at the original text.
 */
export function stripJsonComments(text: string): string {
  const src = text.replace(/^\uFEFF/, "");
  const blank = (s: string) => s.replace(/[^\n]/g, " ");
  /** Index of the next character that is neither white space nor inside a comment. */
  const significant = (from: number): number => {
    let i = from;
    while (i < src.length) {
      if (/\s/.test(src[i]!)) i++;
      else if (src.startsWith("//", i)) {
        const end = src.indexOf("\n", i);
        i = end < 0 ? src.length : end;
      } else if (src.startsWith("/*", i)) {
        const end = src.indexOf("*/", i + 2);
        i = end < 0 ? src.length : end + 2;
      } else return i;
    }
    return i;
  };
  let out = "";
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < src.length && src[j] !== '"' && src[j] !== "\n") j += src[j] === "\\" ? 2 : 1;
      out += src.slice(i, j + 1);
      i = j + 1;
    } else if (src.startsWith("//", i)) {
      const end = src.indexOf("\n", i);
      const stop = end < 0 ? src.length : end;
      out += blank(src.slice(i, stop));
      i = stop;
    } else if (src.startsWith("/*", i)) {
      const end = src.indexOf("*/", i + 2);
      const stop = end < 0 ? src.length : end + 2;
      out += blank(src.slice(i, stop));
      i = stop;
    } else if (c === ",") {
      const next = src[significant(i + 1)];
      out += next === "}" || next === "]" ? " " : ",";
      i++;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** Parses a client file's text; a syntax error says where (line and column). */
export function parseClientConfig(text: string): unknown {
  const stripped = stripJsonComments(text);
  try {
    return JSON.parse(stripped);
  } catch (err) {
    let msg = (err as Error).message;
    const at = /at position (\d+)/.exec(msg);
    if (at && !/line \d+/.test(msg)) {
      const before = stripped.slice(0, Number(at[1]));
      const line = before.split("\n").length;
      const col = before.length - before.lastIndexOf("\n");
      msg = `${msg} (line ${line} column ${col})`;
    }
    throw new InitInputError(`not JSON: ${msg}`);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Where the server map was found: Claude Desktop / Cursor / Claude Code, VS Code mcp.json, VS Code settings. */
export type ServersKey = "mcpServers" | "servers" | "mcp.servers";

export function findServers(config: unknown): { key: ServersKey; servers: [string, unknown][] } | undefined {
  if (!isObject(config)) return undefined;
  if (isObject(config.mcpServers)) return { key: "mcpServers", servers: Object.entries(config.mcpServers) };
  if (isObject(config.servers)) return { key: "servers", servers: Object.entries(config.servers) };
  if (isObject(config.mcp) && isObject(config.mcp.servers))
    return { key: "mcp.servers", servers: Object.entries(config.mcp.servers) };
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------
// Planning: client entries → upstream specs, with secrets replaced by references

/** An environment variable the written file refers to. */
export interface Variable {
  readonly name: string;
  /**
   * `secret`: its value was in the client file and was not copied (kept in memory for --live only).
   * `input`: a VS Code `${input:…}` prompt. `env`: the client file already took it from the environment.
   */
  readonly kind: "secret" | "input" | "env";
  /** The value found in the client file (`secret` only). Never printed, never written. */
  readonly value?: string;
  /** Where it is used: `github env GITHUB_TOKEN`. */
  readonly where: string[];
}

export interface UpstreamPlan {
  /** A valid toolpacks upstream name. */
  readonly name: string;
  /** The name in the client file. */
  readonly original: string;
  /** Strings are toolpacks strings: `${VAR}` is a reference, a literal `$` before `{` or `$` is doubled. */
  readonly spec: {
    url?: string;
    headers?: Record<string, string>;
    command?: string;
    args?: string[];
    env?: Record<string, string>;
    cwd?: string;
  };
  /** Comment lines written above the upstream. */
  readonly notes: string[];
  /** Variables it refers to without a default. */
  readonly needs: string[];
}

export interface InitPlan {
  /** The client file, as given (for comments and messages). */
  readonly source: string;
  readonly key: ServersKey;
  readonly upstreams: UpstreamPlan[];
  /** Entries that were not carried over, and why. */
  readonly skipped: { original: string; reason: string }[];
  readonly variables: Map<string, Variable>;
  /** Said on stderr: things the user should know that the file cannot say. */
  readonly warnings: string[];
}

/** Keys whose values are credentials (GIT_AUTHOR_NAME is not). */
const SECRET_KEY = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|AUTH(?!OR)|CREDENTIAL|COOKIE|(^|[_-])PAT([_-]|$)/i;
/** Values that are credentials whatever their key says: well-known token shapes. */
const SECRET_VALUE =
  /^(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|sk-[\w-]{20,}|sk_(live|test)_\w{16,}|xox[abprs]-[\w-]{10,}|AKIA[0-9A-Z]{16}|AIza[\w-]{30,}|glpat-[\w-]{20,})$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Part of a value that stands for a secret until the text is escaped; then it becomes `${VAR}`. */
const HOLE = (n: number) => `\u0000${n}\u0000`;

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

/** A valid upstream name for a client server name; `taken` holds names already given. */
export function upstreamName(original: string, taken: ReadonlySet<string>): string {
  let base = original;
  if (!NAME_RULE.test(base) || RESERVED_KEYS.includes(base)) {
    base = original
      .replace(/[^A-Za-z0-9_.-]+/g, "-")
      .replace(/^[.-]+/, "")
      .replace(/-+$/, "")
      .slice(0, 64);
    if (!base) base = "server";
    if (RESERVED_KEYS.includes(base)) base = `${base}-server`;
  }
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base.slice(0, 64 - String(n).length - 1)}-${n}`;
  return name;
}

/** One server's conversion: its strings, secrets and notes. */
class ServerContext {
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

const KNOWN_KEYS = new Set([
  "type",
  "transportType",
  "command",
  "args",
  "env",
  "cwd",
  "url",
  "serverUrl",
  "httpUrl",
  "headers",
  "envFile",
  "disabled",
]);

function stringMap(value: unknown): [string, string][] {
  if (!isObject(value)) return [];
  return Object.entries(value)
    .filter(([, v]) => v !== null && v !== undefined && typeof v !== "object")
    .map(([k, v]) => [k, String(v)]);
}

/**
 * The pure conversion: a parsed client config → what to write. Throws InitInputError when it holds no servers.
 * `source` names the client file in comments and messages.
 */
export function planInit(config: unknown, source: string): InitPlan {
  const found = findServers(config);
  if (!found) {
    throw new InitInputError(
      `no servers: expected an "mcpServers" map (Claude Desktop, Claude Code, Cursor), "servers" (VS Code mcp.json) or "mcp": {"servers"} (VS Code settings.json)`,
    );
  }
  if (!found.servers.length) throw new InitInputError(`no servers: "${found.key}" is empty`);
  const plan: InitPlan = {
    source,
    key: found.key,
    upstreams: [],
    skipped: [],
    variables: new Map(),
    warnings: [],
  };
  const taken = new Set<string>();
  for (const [original, entry] of found.servers) {
    if (!isObject(entry)) {
      plan.skipped.push({ original, reason: "not an object" });
      continue;
    }
    if (entry.disabled === true) {
      plan.skipped.push({ original, reason: `disabled in ${source}` });
      continue;
    }
    const name = upstreamName(original, taken);
    const ctx = new ServerContext(name, plan);
    const notes: string[] = [];
    if (name !== original) notes.push(`${JSON.stringify(original)} in ${source}`);
    const type = String(entry.type ?? entry.transportType ?? "")
      .toLowerCase()
      .replace(/[^a-z]/g, "");
    const rawUrl = [entry.url, entry.serverUrl, entry.httpUrl].find((u) => typeof u === "string") as
      | string
      | undefined;
    const command = typeof entry.command === "string" && entry.command.trim() ? entry.command : undefined;
    const wantsHttp = ["http", "sse", "streamablehttp"].includes(type);
    const useUrl = rawUrl !== undefined && (wantsHttp || command === undefined);
    if (type && !["stdio", "http", "sse", "streamablehttp"].includes(type))
      notes.push(
        `type ${JSON.stringify(entry.type ?? entry.transportType)} is unknown; read as ${useUrl ? "HTTP" : "stdio"}`,
      );
    if (!useUrl && command === undefined) {
      plan.skipped.push({ original, reason: "it has neither command nor url" });
      continue;
    }
    const spec: UpstreamPlan["spec"] = {};
    const ignored = Object.keys(entry).filter((k) => !KNOWN_KEYS.has(k));
    if (useUrl) {
      const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(rawUrl!.trim())?.[1]?.toLowerCase();
      if (scheme !== "http" && scheme !== "https") {
        plan.skipped.push({ original, reason: `its url is not http(s)${scheme ? ` (${scheme}:)` : ""}` });
        continue;
      }
      spec.url = ctx.plain(rawUrl!.trim(), `${name} url`);
      const sse =
        type === "sse" || (!type && typeof entry.httpUrl !== "string" && /\/sse\/?(\?|$)/.test(rawUrl!));
      if (sse) {
        notes.push(
          "SSE in the client file: toolpacks speaks Streamable HTTP only. Many servers offer both (often",
          "/mcp next to /sse): point url at that. Otherwise bridge it, e.g. npx supergateway --sse URL.",
        );
      }
      const headers = stringMap(entry.headers);
      if (headers.length) {
        spec.headers = {};
        for (const [k, v] of headers) {
          const where = `${name} header ${k}`;
          spec.headers[k] =
            /^(proxy-)?authorization$/i.test(k) || isSecretKey(k)
              ? ctx.secretValue(
                  v,
                  /^(proxy-)?authorization$/i.test(k)
                    ? [`${ctx.prefix}_TOKEN`]
                    : [`${ctx.prefix}_${envName(k.replace(/^x-/i, ""))}`],
                  where,
                  true,
                )
              : ctx.plain(v, where);
        }
      }
      const dropped = ["command", "args", "env", "cwd"].filter((k) => entry[k] !== undefined);
      if (dropped.length)
        notes.push(`not carried over: ${dropped.join(", ")} (they apply to stdio servers, not url)`);
    } else {
      spec.command = ctx.plain(command!, `${name} command`);
      if (Array.isArray(entry.args)) {
        const args = entry.args.filter((a) => a !== null && typeof a !== "object").map(String);
        if (args.length) spec.args = ctx.args(args);
      } else if (entry.args !== undefined) notes.push("args was not a list; not carried over");
      const env = stringMap(entry.env);
      if (env.length) {
        spec.env = {};
        for (const [k, v] of env) {
          const where = `${name} env ${k}`;
          spec.env[k] = isSecretKey(k)
            ? ctx.secretValue(v, [k, `${ctx.prefix}_${k}`], where)
            : ctx.plain(v, where, [k, `${ctx.prefix}_${k}`]);
        }
      }
      if (typeof entry.cwd === "string" && entry.cwd) spec.cwd = ctx.plain(entry.cwd, `${name} cwd`);
      if (rawUrl !== undefined) notes.push("the client file also gives a url; this upstream uses command");
      if (entry.headers !== undefined) notes.push("not carried over: headers (they apply to url servers)");
    }
    if (typeof entry.envFile === "string") {
      notes.push(
        `envFile ${entry.envFile} is not read by toolpacks: set its variables where toolpacks serve runs`,
      );
    }
    if (ignored.length) notes.push(`not carried over: ${ignored.join(", ")} (not toolpacks settings)`);
    taken.add(name);
    plan.upstreams.push({ name, original, spec, notes: [...notes, ...ctx.notes], needs: [...ctx.needs] });
  }
  if (!plan.upstreams.length) {
    throw new InitInputError(
      `no usable servers: ${plan.skipped.map((s) => `${JSON.stringify(s.original)}: ${s.reason}`).join("; ")}`,
    );
  }
  return plan;
}

// ---------------------------------------------------------------------------------------------------------
// Rendering

/** One server's lists, as read with --live; or why it could not be read. */
export type Listing =
  | {
      readonly ok: true;
      readonly tools: readonly { name: string; title?: string; description?: string }[];
      readonly prompts: readonly { name: string; title?: string; description?: string }[];
      readonly resources: number;
      readonly templates: number;
    }
  | { readonly ok: false; readonly reason: string };

/** A YAML scalar on one line: plain when that reads back as the same string, else quoted. */
export function scalar(s: string): string {
  const y = stringify(s, { lineWidth: 0 }).replace(/\n$/, "");
  return y.includes("\n") ? JSON.stringify(s) : y;
}

function oneLine(s: string, max = 100): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters do not belong in a comment
  const t = s.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
  return t.length > max ? `${t.slice(0, max - 1).trimEnd()}…` : t;
}

function firstLine(item: { title?: string; description?: string }): string {
  const d = (item.description ?? "")
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l);
  return oneLine(d ?? item.title ?? "");
}

function comment(lines: readonly string[], indent: string): string[] {
  return lines.map((l) => `${indent}# ${oneLine(l, 200)}`.trimEnd());
}

function mapBlock(key: string, map: Record<string, string> | undefined, indent: string): string[] {
  if (!map || !Object.keys(map).length) return [];
  return [
    `${indent}${key}:`,
    ...Object.entries(map).map(([k, v]) => `${indent}  ${scalar(k)}: ${scalar(v)}`),
  ];
}

function renderUpstream(u: UpstreamPlan): string[] {
  const s = u.spec;
  return [
    ...comment(u.notes, "  "),
    `  ${scalar(u.name)}:`,
    ...(s.url !== undefined ? [`    url: ${scalar(s.url)}`] : []),
    ...mapBlock("headers", s.headers, "    "),
    ...(s.command !== undefined ? [`    command: ${scalar(s.command)}`] : []),
    ...(s.args?.length ? [`    args: [${s.args.map((a) => JSON.stringify(a)).join(", ")}]`] : []),
    ...mapBlock("env", s.env, "    "),
    ...(s.cwd !== undefined ? [`    cwd: ${scalar(s.cwd)}`] : []),
  ];
}

function variableLines(plan: InitPlan): string[] {
  const vars = [...plan.variables.values()];
  if (!vars.length) return [];
  const w = Math.max(...vars.map((v) => v.name.length));
  const why = { secret: "value not copied", input: "a VS Code input", env: "from the environment" };
  return vars.map((v) => `  ${v.name.padEnd(w)}  ${v.where.join(", ")} (${why[v.kind]})`);
}

/** Members of one server's toolset, renamed with `as:` where an earlier server already exposes the name. */
function members(
  server: string,
  items: readonly { name: string; title?: string; description?: string }[],
  exposed: Set<string>,
): { lines: string[]; count: number } {
  const rows: { text: string; note: string }[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    if (seen.has(item.name)) continue;
    seen.add(item.name);
    const ref = `${server}/${item.name}`;
    if (!TOOL_NAME_RULE.test(item.name)) {
      rows.push({
        text: `# - ${JSON.stringify(ref)}`,
        note: "not a valid MCP name: toolpacks cannot serve it",
      });
      continue;
    }
    if (!exposed.has(item.name)) {
      exposed.add(item.name);
      rows.push({ text: `- ${scalar(ref)}`, note: firstLine(item) });
      continue;
    }
    let as = `${server}_${item.name}`.slice(0, 128);
    for (let n = 2; exposed.has(as); n++)
      as = `${`${server}_${item.name}`.slice(0, 127 - String(n).length)}_${n}`;
    exposed.add(as);
    rows.push({
      text: `- { tool: ${scalar(ref)}, as: ${scalar(as)} }`,
      note: `${firstLine(item)} (renamed: another server has ${item.name})`.trim(),
    });
  }
  const w = Math.max(0, ...rows.map((r) => r.text.length));
  return {
    lines: rows.map((r) => `      ${r.note ? `${r.text.padEnd(w)}   # ${r.note}` : r.text}`),
    count: rows.filter((r) => !r.text.startsWith("#")).length,
  };
}

function renderToolsets(plan: InitPlan, live: ReadonlyMap<string, Listing>): string[] {
  const body: string[] = [];
  const tools = new Set<string>();
  const prompts = new Set<string>();
  let any = false;
  for (const u of plan.upstreams) {
    const l = live.get(u.name);
    if (!l) continue;
    if (!l.ok) {
      body.push(
        ...comment(
          [
            `${u.name}: not reached while writing this file: ${l.reason}`,
            `Until a toolset names it, it is served whole as the toolset "${u.name}".`,
          ],
          "  ",
        ),
      );
      continue;
    }
    const t = members(u.name, l.tools, tools);
    const p = members(u.name, l.prompts, prompts);
    if (!t.count && !p.count) {
      body.push(
        ...comment(
          [`${u.name}: lists no tools or prompts; until a toolset names it, it is served whole.`],
          "  ",
        ),
      );
      continue;
    }
    any = true;
    const counts = [`${l.tools.length} tool${l.tools.length === 1 ? "" : "s"}`];
    if (l.prompts.length) counts.push(`${l.prompts.length} prompt${l.prompts.length === 1 ? "" : "s"}`);
    body.push(`  # ${u.name}: ${counts.join(", ")}`, `  ${scalar(u.name)}:`);
    if (t.lines.length) body.push("    tools:", ...t.lines);
    else body.push("    tools: []");
    if (p.lines.length) body.push("    prompts:", ...p.lines);
    if (l.resources + l.templates > 0) {
      body.push(
        `    # ${l.resources} resource(s), ${l.templates} template(s). To serve them, uncomment (if the list can`,
        "    # become empty, the glob matches nothing and this toolset is not enabled):",
        `    # resources: [${u.name}/**]`,
      );
    }
  }
  if (!body.length) return [];
  return any ? ["", "toolsets:", ...body] : ["", ...body.map((l) => l.replace(/^ {2}/, ""))];
}

/** The packs.yaml text: upstreams, and with `live` one toolset per server that was listed. */
export function renderPacks(plan: InitPlan, live?: ReadonlyMap<string, Listing>): string {
  const names = plan.upstreams.map((u) => u.name);
  const head = [
    SCHEMA_LINE,
    "#",
    `# Made by \`toolpacks init\` from ${plan.source} ("${plan.key}"): ${names.length} server(s), each an upstream.`,
  ];
  if (live) {
    head.push(
      "#",
      "# Each toolset below is one server's tools as it listed them when this file was written, on by default.",
      '# Regroup them by subject: make toolsets such as "issues" or "docs", cut and paste member lines into',
      "# them, delete the per-server toolsets and the tools you do not want. An upstream that a toolset names",
      "# serves only the tools named; `default: false` makes a toolset opt-in (/mcp?name). A tool the server",
      "# adds later is not served until a toolset names it (a glob such as github/*_issue names many).",
    );
  } else {
    head.push(
      "#",
      "# No toolset names these upstreams yet, so each is served whole as a toolset of its own name, on by",
      `# default: /mcp gets every tool, /mcp?only=${names[0]} gets ${names[0]}'s alone. To group tools by`,
      "# subject, add toolsets, e.g.:",
      "#",
      "#   toolsets:",
      "#     issues:",
      "#       description: Read and triage issues.",
      "#       tools: [github/list_issues, github/*_issue]",
      "#",
      "# An upstream that a toolset names serves only the tools named. `toolpacks init --live` lists each",
      "# server's tools for you to regroup.",
    );
  }
  const vars = variableLines(plan);
  if (vars.length) {
    head.push(
      "#",
      "# Set these environment variables where `toolpacks serve` runs (secret values were not copied):",
      ...vars.map((l) => `#${l}`),
    );
  }
  for (const s of plan.skipped)
    head.push("#", `# Not carried over: ${JSON.stringify(s.original)}: ${s.reason}.`);
  head.push(
    "#",
    "# Check it with `npx toolpacks check FILE`; the format is in SPEC.md of the toolpacks package.",
  );
  const lines = [...head, "", "upstreams:", ...plan.upstreams.flatMap(renderUpstream)];
  if (live) lines.push(...renderToolsets(plan, live));
  return `${lines.map((l) => l.trimEnd()).join("\n")}\n`;
}

/** Every `${NAME}` in a text set to a harmless value: only to check that a file compiles. */
export function dummyEnv(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const m of text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)/g)) env[m[1]!] = "1";
  return env;
}

/** Compiles a text with every referenced variable set: the check that what init writes is a valid config. */
export function compileWritten(file: string, text: string): CatalogResult {
  return compileTexts([{ file, text }], dummyEnv(text));
}

// ---------------------------------------------------------------------------------------------------------
// --live: connect to each upstream and list what it offers

/** Secret values in a message (a child's stderr, an error) replaced by their variable's reference. */
export function mask(text: string, variables: ReadonlyMap<string, Variable>): string {
  let out = text;
  for (const v of variables.values()) {
    if (v.value && v.value.length >= 3) out = out.split(v.value).join(`\${${v.name}}`);
  }
  return out;
}

export async function listLive(
  plan: InitPlan,
  file: string,
  progress: (line: string) => void,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Map<string, Listing>> {
  const result = new Map<string, Listing>();
  const known: Record<string, string> = {};
  for (const v of plan.variables.values()) if (v.value !== undefined) known[v.name] = v.value;
  const reachable: UpstreamPlan[] = [];
  for (const u of plan.upstreams) {
    const unset = u.needs.filter((n) => known[n] === undefined && !env[n]);
    if (unset.length) {
      result.set(u.name, { ok: false, reason: `environment variable ${unset.join(", ")} not set` });
    } else reachable.push(u);
  }
  if (!reachable.length) return result;
  const text = renderPacks({ ...plan, upstreams: reachable, skipped: [] });
  const compiled = compileTexts([{ file, text }], { ...env, ...known });
  if (!compiled.ok) {
    throw new Error(
      `cannot read the upstreams back: ${compiled.errors.map((e) => mask(formatConfigError(e), plan.variables)).join("; ")}`,
    );
  }
  const [{ UpstreamPool }, { closeAgent }] = await Promise.all([
    import("../upstream/pool.js"),
    import("../upstream/transport.js"),
  ]);
  const pool = new UpstreamPool(compiled.catalog, {
    clientName: "toolpacks-init",
    clientVersion: VERSION,
    logger: silentLogger,
  });
  progress(`connecting to ${reachable.length} upstream${reachable.length === 1 ? "" : "s"}…`);
  try {
    await Promise.all(
      reachable.map(async (u) => {
        progress(`listing tools of ${u.name}…`);
        const state = (await pool.ensure([u.name])).get(u.name);
        if (state?.status === "ready") {
          result.set(u.name, {
            ok: true,
            tools: state.tools,
            prompts: state.prompts as { name: string; title?: string; description?: string }[],
            resources: state.resources.length,
            templates: state.templates.length,
          });
          progress(`${u.name}: ${state.tools.length} tool(s)`);
        } else {
          const reason = oneLine(mask(state?.reason ?? "not started", plan.variables), 300);
          result.set(u.name, { ok: false, reason });
          progress(`${u.name}: not reached: ${reason}`);
        }
      }),
    );
  } finally {
    await pool.close();
    await closeAgent();
  }
  return result;
}

// ---------------------------------------------------------------------------------------------------------
// The command

interface InitOptions {
  from: string;
  output: string;
  force?: boolean;
  live?: boolean;
}

function fail(message: string, code: number): void {
  process.stderr.write(`init: ${message}\n`);
  process.exitCode = code;
}

export function registerInit(program: Command): void {
  program
    .command("init")
    .description(
      "write a packs.yaml from a client's MCP server configuration (Claude Desktop, Cursor, VS Code)",
    )
    .requiredOption(
      "--from <file>",
      "the client's configuration file (JSON; comments and trailing commas allowed)",
    )
    .option("-o, --output <file>", "where to write", "packs.yaml")
    .option("--force", "overwrite the output file if it exists")
    .option("--live", "connect to each server and write one toolset per server listing its tools")
    .action(async (opts: InitOptions) => {
      let text: string;
      try {
        text = readFileSync(opts.from, "utf8");
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        const why =
          code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a directory" : String(code ?? err);
        return fail(`cannot read ${opts.from}: ${why}`, 1);
      }
      let plan: InitPlan;
      try {
        plan = planInit(parseClientConfig(text), opts.from);
      } catch (err) {
        if (err instanceof InitInputError) return fail(`${opts.from}: ${err.message}`, 1);
        throw err;
      }
      const out = resolvePath(opts.output);
      if (existsSync(out) && !opts.force)
        return fail(`${opts.output} exists; pass --force to overwrite it`, 2);

      const tty = process.stderr.isTTY === true;
      const progress = (line: string) => {
        if (tty) process.stderr.write(`${line}\n`);
      };
      let live: Map<string, Listing> | undefined;
      if (opts.live) {
        try {
          live = await listLive(plan, out, progress);
        } catch (err) {
          return fail((err as Error).message, 1);
        }
      }
      const yaml = renderPacks(plan, live);
      const compiled = compileWritten(opts.output, yaml);
      if (!compiled.ok) {
        for (const e of compiled.errors)
          process.stderr.write(`${mask(formatConfigError(e), plan.variables)}\n`);
        return fail(
          `the file made from ${opts.from} does not compile; nothing was written. This is a bug in toolpacks init: please report it with the client file (secrets removed)`,
          1,
        );
      }
      try {
        writeFileSync(out, yaml, { flag: opts.force ? "w" : "wx" });
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === "EEXIST") return fail(`${opts.output} exists; pass --force to overwrite it`, 2);
        return fail(`cannot write ${opts.output}: ${code ?? (err as Error).message}`, 1);
      }

      for (const s of plan.skipped)
        process.stderr.write(`init: skipped ${JSON.stringify(s.original)}: ${s.reason}\n`);
      for (const w of plan.warnings) process.stderr.write(`init: ${w}\n`);
      for (const [name, l] of live ?? []) {
        if (!l.ok)
          process.stderr.write(`init: ${name} was not reached (${l.reason}); it has no toolset of its own\n`);
      }
      const vars = variableLines(plan);
      if (vars.length) {
        process.stderr.write(
          `init: set these environment variables where toolpacks serve runs (secret values in ${opts.from} were not copied):\n${vars.join("\n")}\n`,
        );
      }
      const names = plan.upstreams.map((u) => u.name);
      const toolsets = compiled.catalog.toolsets.filter((t) => !t.implicit).length;
      process.stdout.write(
        `wrote ${opts.output}: ${names.length} upstream(s) (${names.join(", ")})${
          live
            ? `, ${toolsets} toolset(s) to regroup by subject`
            : "; each is served as a toolset of its own name"
        }\nnext: npx toolpacks check ${opts.output}, then npx toolpacks serve ${opts.output}\n`,
      );
    });
}
