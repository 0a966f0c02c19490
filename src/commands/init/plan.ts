/** @module The pure conversion: a parsed client config → the upstreams to write, with secrets as references. */
import { NAME_RULE, RESERVED_KEYS } from "../../catalog/names.js";
import { findServers, InitInputError, isObject } from "./read.js";
import { VariableBook } from "./secrets.js";
import { ServerContext } from "./server-context.js";
import type { InitPlan, UpstreamPlan } from "./types.js";

/** A valid upstream name for a client server name; `taken` holds names already given. */
export function upstreamName(original: string, taken: ReadonlySet<string>): string {
  return nameFor(original, taken).name;
}

/** The upstream name and the name it would have had if no earlier server had taken it. */
function nameFor(original: string, taken: ReadonlySet<string>): { name: string; base: string } {
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
  return { name, base };
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

/** A spec with every string passed through `f`. */
function fillSpec(spec: UpstreamPlan["spec"], f: (s: string) => string): UpstreamPlan["spec"] {
  const map = (m: Record<string, string> | undefined) =>
    m && Object.fromEntries(Object.entries(m).map(([k, v]) => [k, f(v)]));
  return {
    ...(spec.url !== undefined ? { url: f(spec.url) } : {}),
    ...(spec.headers ? { headers: map(spec.headers)! } : {}),
    ...(spec.command !== undefined ? { command: f(spec.command) } : {}),
    ...(spec.args ? { args: spec.args.map(f) } : {}),
    ...(spec.env ? { env: map(spec.env)! } : {}),
    ...(spec.cwd !== undefined ? { cwd: f(spec.cwd) } : {}),
  };
}

/**
 * Why a command may fail where toolpacks starts it: npx (or `npm exec`) without `-y` asks before it installs a
 * package it does not have, and with no terminal to ask on it gives up ("npx canceled due to missing packages
 * and no YES option"). Undefined when the command says yes (`-y`, `--yes`, `npm_config_yes`) or is not npx.
 */
function npxWithoutYes(
  command: string,
  args: readonly string[],
  env: ReadonlyMap<string, string>,
): string | undefined {
  const program = command
    .trim()
    .split(/[\\/]/)
    .at(-1)!
    .replace(/\.(cmd|exe)$/i, "")
    .toLowerCase();
  const npmExec = program === "npm" && ["exec", "x"].includes(args[0] ?? "");
  if (program !== "npx" && !npmExec) return undefined;
  if (args.some((a) => /^(-y|--yes(=true)?)$/.test(a))) return undefined;
  if (/^(true|1|yes)$/i.test(env.get("npm_config_yes") ?? env.get("NPM_CONFIG_YES") ?? "")) return undefined;
  const how = npmExec ? `npm ${args[0]} --yes` : "npx -y";
  return `its command is ${npmExec ? `npm ${args[0]}` : "npx"} without ${npmExec ? "--yes" : "-y"}: toolpacks starts it with no terminal, where it cannot ask to install a package it does not have and gives up ("npx canceled due to missing packages and no YES option"). Write ${how} (pin the version, pkg@1.2.3: it runs whatever the registry holds under that name), or install the package and use its own command`;
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
  const taken = new Map<string, string>();
  const book = new VariableBook();
  const drafts: UpstreamPlan[] = [];
  for (const [original, entry] of found.servers) {
    if (!isObject(entry)) {
      plan.skipped.push({ original, reason: "not an object" });
      continue;
    }
    if (entry.disabled === true) {
      plan.skipped.push({ original, reason: `disabled in ${source}` });
      continue;
    }
    const { name, base } = nameFor(original, new Set(taken.keys()));
    const ctx = new ServerContext(name, plan, book);
    const notes: string[] = [];
    if (name !== original) notes.push(`${JSON.stringify(original)} in ${source}`);
    if (name !== base) {
      const other = JSON.stringify(taken.get(base));
      notes.push(`named ${name}: ${other} is already ${base}`);
      plan.warnings.push(
        `${JSON.stringify(original)} would be named ${base} like ${other}; it is written as ${name} (rename either upstream in the file if you like)`,
      );
    }
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
      spec.url = ctx.value(rawUrl!.trim(), `${name} url`);
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
        for (const [k, v] of headers) spec.headers[k] = ctx.header(k, v, `${name} header ${k}`);
      }
      const dropped = ["command", "args", "env", "cwd"].filter((k) => entry[k] !== undefined);
      if (dropped.length)
        notes.push(`not carried over: ${dropped.join(", ")} (they apply to stdio servers, not url)`);
    } else {
      spec.command = ctx.value(command!, `${name} command`);
      if (Array.isArray(entry.args)) {
        const args = entry.args.filter((a) => a !== null && typeof a !== "object").map(String);
        if (args.length) spec.args = ctx.args(args);
      } else if (entry.args !== undefined) notes.push("args was not a list; not carried over");
      const env = stringMap(entry.env);
      if (env.length) {
        spec.env = {};
        for (const [k, v] of env) spec.env[k] = ctx.env(k, v, `${name} env ${k}`);
      }
      if (typeof entry.cwd === "string" && entry.cwd) spec.cwd = ctx.value(entry.cwd, `${name} cwd`);
      const rawArgs = Array.isArray(entry.args) ? entry.args.map(String) : [];
      const npx = npxWithoutYes(command!, rawArgs, new Map(env));
      if (npx) plan.warnings.push(`${name}: ${npx}`);
      if (rawUrl !== undefined) notes.push("the client file also gives a url; this upstream uses command");
      if (entry.headers !== undefined) notes.push("not carried over: headers (they apply to url servers)");
    }
    if (typeof entry.envFile === "string") {
      notes.push(
        `envFile ${entry.envFile} is not read by toolpacks: set its variables where toolpacks serve runs`,
      );
    }
    if (ignored.length) notes.push(`not carried over: ${ignored.join(", ")} (not toolpacks settings)`);
    taken.set(name, original);
    drafts.push({ name, original, spec, notes: [...notes, ...ctx.notes], needs: [] });
  }
  const { variables, needs } = book.finish();
  for (const [k, v] of variables) plan.variables.set(k, v);
  for (const d of drafts)
    plan.upstreams.push({
      ...d,
      spec: fillSpec(d.spec, (s) => book.fill(s)),
      needs: needs.get(d.name) ?? [],
    });
  if (!plan.upstreams.length) {
    throw new InitInputError(
      `no usable servers: ${plan.skipped.map((s) => `${JSON.stringify(s.original)}: ${s.reason}`).join("; ")}`,
    );
  }
  return plan;
}
