/** @module Text that clients read (instructions, titles, descriptions) may quote only public variables. */
import type { ConfigError } from "./errors.js";
import type { Path, Source } from "./source.js";

const TOOLSET_TEXT = ["title", "description", "instructions"];
const MEMBER_TEXT = ["title", "description"];

/** Top-level `instructions`; a toolset's title, description, instructions, requires; a tool's or prompt's override. */
function isTextField(path: Path): boolean {
  const [top, , key, , field] = path;
  if (top === "instructions") return path.length === 1;
  if (top !== "toolsets") return false;
  if (path.length === 3) return TOOLSET_TEXT.includes(String(key));
  // What a toolset requires is shown to clients it is forbidden to (/toolsets, list_server_toolsets).
  if (key === "requires") return true;
  return path.length === 5 && (key === "tools" || key === "prompts") && MEMBER_TEXT.includes(String(field));
}

/** The union of every file's `public_env` (names only; a malformed list is the schema's to report). */
export function publicEnvOf(data: readonly unknown[]): Set<string> {
  const names = new Set<string>();
  for (const d of data) {
    const list = d && typeof d === "object" ? (d as { public_env?: unknown }).public_env : undefined;
    if (Array.isArray(list)) for (const n of list) if (typeof n === "string") names.add(n);
  }
  return names;
}

/** The error for `${name}` at `path`, or undefined when the variable is public or the field is not client text. */
export function textFieldProblem(
  source: Source,
  path: Path,
  name: string,
  publicEnv: ReadonlySet<string>,
): ConfigError | undefined {
  if (publicEnv.has(name) || !isTextField(path)) return undefined;
  return source.error(
    path,
    `${path.join(".")} uses \${${name}}, but clients read this text and ${name} is not in public_env`,
    "list it in public_env if it is not a secret",
  );
}
