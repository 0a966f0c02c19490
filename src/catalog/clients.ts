/**
 * @module `clients:` compiled: each entry's name patterns, version range, capabilities and what it gives, every
 * file's in file order, then the built-in profiles unless some file says `clients: []`.
 */
import { type ConfigError, closest } from "../config/errors.js";
import type { LoadedFile } from "../config/load.js";
import type { ClientSpec } from "../config/types.js";
import { parseQuery } from "../selection.js";
import { BUILTIN_CLIENTS } from "./builtin-clients.js";
import { parseRange } from "./client-version.js";
import type { ClientProfile } from "./types.js";
import { where } from "./where.js";

/** A dotted capability name: `elicitation`, `elicitation.url`, `experimental.my-ext`. */
const CAPABILITY = /^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/;

/** `cursor*` → /^cursor.*$/i: `*` is any run of characters, `?` one; everything else is literal. */
function clientPattern(glob: string): RegExp {
  let out = "";
  for (const c of glob) {
    if (c === "*") out += ".*";
    else if (c === "?") out += ".";
    else out += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${out}$`, "is");
}

type Problem = { path: (string | number)[]; message: string; hint?: string };

/** The profile an entry compiles to, and what is wrong with it (against the catalog's toolset names). */
function profileOf(
  spec: ClientSpec,
  whereAt: string,
  toolsets: ReadonlySet<string>,
): { profile?: ClientProfile; problems: Problem[] } {
  const problems: Problem[] = [];
  const clients = typeof spec.client === "string" ? [spec.client] : spec.client;
  let version: ClientProfile["version"];
  if (spec.version !== undefined) {
    const read = parseRange(spec.version);
    if (read.ok) version = { text: spec.version, range: read.range };
    else problems.push({ path: ["version"], message: `version: ${read.error}`, hint: 'e.g. ">=1.2 <2"' });
  }
  for (const name of Object.keys(spec.capabilities ?? {})) {
    if (!CAPABILITY.test(name))
      problems.push({
        path: ["capabilities", name],
        message: `capability "${name}" is not a capability name`,
        hint: "a name as initialize declares it, dotted to look inside one: elicitation.url",
      });
  }
  if (spec.selection !== undefined) {
    const parsed = parseQuery(spec.selection);
    if (!parsed.ok) problems.push({ path: ["selection"], message: `selection: ${parsed.error}` });
    else {
      for (const name of new Set(parsed.query.named)) {
        if (toolsets.has(name)) continue;
        const guess = closest(name, toolsets);
        problems.push({
          path: ["selection"],
          message: `selection names toolset "${name}", which is not declared`,
          ...(guess ? { hint: `did you mean "${guess}"?` } : {}),
        });
      }
    }
  }
  if (problems.length) return { problems };
  const profile: ClientProfile = {
    clients,
    patterns: clients.map(clientPattern),
    ...(version ? { version } : {}),
    ...(spec.capabilities ? { capabilities: { ...spec.capabilities } } : {}),
    ...(spec.max_tools !== undefined ? { maxTools: spec.max_tools } : {}),
    ...(spec.max_list_bytes !== undefined ? { maxListBytes: spec.max_list_bytes } : {}),
    defer: spec.defer ?? "auto",
    ...(spec.selection !== undefined ? { selection: spec.selection } : {}),
    ...(spec.max_description_bytes !== undefined ? { maxDescriptionBytes: spec.max_description_bytes } : {}),
    where: whereAt,
  };
  return { profile, problems };
}

/** Every file's profiles in order, then the built-in ones unless a file has an empty `clients:` list. */
export function clientsOf(
  files: readonly LoadedFile[],
  toolsets: ReadonlySet<string>,
  errors: ConfigError[],
): ClientProfile[] {
  const out: ClientProfile[] = [];
  let builtins = true;
  for (const file of files) {
    const { source, config, unresolved } = file;
    const list = config.clients;
    if (!Array.isArray(list)) continue;
    if (list.length === 0) builtins = false;
    list.forEach((spec, i) => {
      const path = ["clients", i];
      // An entry that failed the schema is null here (and reported): nothing more is said of it.
      if (!spec || unresolved.within(path)) return;
      const { profile, problems } = profileOf(spec, where(source.at(path), source.file), toolsets);
      for (const p of problems) errors.push(source.error([...path, ...p.path], p.message, p.hint));
      if (profile) out.push(profile);
    });
  }
  if (!builtins) return out;
  for (const b of BUILTIN_CLIENTS) {
    const { profile } = profileOf(b.spec, "built-in", toolsets);
    if (profile) out.push({ ...profile, source: b.source });
  }
  return out;
}
