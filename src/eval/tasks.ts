/**
 * @module The tasks file of `toolpacks eval`: `{query, expect: [tool, …], toolset?}` entries, as YAML (a list,
 * with positions for errors) or JSONL (one object a line); and the starter file `--draft` writes.
 */
import { parseSource } from "../config/source.js";
import { MAX_QUERY_LENGTH } from "../search/tools.js";

export interface Task {
  /** What a person asks for, in their words. */
  readonly query: string;
  /** Exposed tool names any of which is a right answer. */
  readonly expect: readonly string[];
  /** find_tools' `toolset` argument, when the task searches one toolset. */
  readonly toolset?: string;
  /** `FILE:LINE:COL` of the entry. */
  readonly where: string;
}

export type TasksRead = { ok: true; tasks: Task[] } | { ok: false; errors: string[] };

const KEYS = new Set(["query", "expect", "toolset"]);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** One entry checked: the task, or what is wrong with it (each problem with its position). */
function taskOf(
  value: unknown,
  at: (key?: string, onKey?: boolean) => string,
): { task?: Omit<Task, "where">; problems: string[] } {
  if (!isRecord(value)) return { problems: [`${at()}: a task is a mapping {query, expect, toolset?}`] };
  const problems: string[] = [];
  for (const key of Object.keys(value))
    if (!KEYS.has(key))
      problems.push(`${at(key, true)}: unknown key "${key}" (a task has query, expect, toolset)`);
  const { query, expect, toolset } = value;
  if (typeof query !== "string") problems.push(`${at("query")}: query must be a string`);
  else if (query.trim() === "")
    problems.push(`${at("query")}: query is empty (write what a person would ask for, in their words)`);
  else if (query.length > MAX_QUERY_LENGTH)
    problems.push(`${at("query")}: query is longer than find_tools takes (${MAX_QUERY_LENGTH} characters)`);
  const list = typeof expect === "string" ? [expect] : expect;
  if (!Array.isArray(list) || !list.length || !list.every((x) => typeof x === "string" && x !== ""))
    problems.push(`${at("expect")}: expect must list the tools (exposed names) that are a right answer`);
  if (toolset !== undefined && typeof toolset !== "string")
    problems.push(`${at("toolset")}: toolset must be a toolset name`);
  if (problems.length) return { problems };
  return {
    task: {
      query: query as string,
      expect: list as string[],
      ...(toolset !== undefined ? { toolset: toolset as string } : {}),
    },
    problems,
  };
}

/** JSONL: one task a line (blank lines and `#` comments skipped). */
function readJsonl(file: string, text: string): TasksRead {
  const tasks: Task[] = [];
  const errors: string[] = [];
  text.split("\n").forEach((line, i) => {
    const trimmed = line.trim();
    if (!trimmed || trimmed.startsWith("#")) return;
    const where = `${file}:${i + 1}:1`;
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch {
      errors.push(`${where}: not JSON (a tasks .jsonl file has one {"query", "expect"} object a line)`);
      return;
    }
    const { task, problems } = taskOf(value, () => where);
    errors.push(...problems);
    if (task) tasks.push({ ...task, where });
  });
  return errors.length ? { ok: false, errors } : { ok: true, tasks };
}

/** YAML: a list of tasks, or a mapping with `tasks:` (the file `--draft` writes is the list). */
function readYaml(file: string, text: string): TasksRead {
  const parsed = parseSource(file, text);
  if (parsed.errors.length)
    return { ok: false, errors: parsed.errors.map((e) => `${e.file}:${e.line}:${e.col}: ${e.message}`) };
  const { source } = parsed;
  const data = source.data;
  const base = isRecord(data) && Array.isArray(data.tasks) ? ["tasks"] : [];
  const list = base.length ? (data as { tasks: unknown[] }).tasks : data;
  if (!Array.isArray(list))
    return { ok: false, errors: [`${file}:1:1: a tasks file is a list of {query, expect, toolset?}`] };
  const tasks: Task[] = [];
  const errors: string[] = [];
  list.forEach((value, i) => {
    const at = (key?: string, onKey = false) => {
      const p = source.at([...base, i, ...(key ? [key] : [])], onKey);
      return `${file}:${p.line}:${p.col}`;
    };
    const { task, problems } = taskOf(value, at);
    errors.push(...problems);
    if (task) tasks.push({ ...task, where: at() });
  });
  return errors.length ? { ok: false, errors } : { ok: true, tasks };
}

/** `FILE:LINE:COL: …` → [line, col], to list errors by position. */
function position(error: string): [number, number] {
  const m = /:(\d+):(\d+): /.exec(error);
  return m ? [Number(m[1]), Number(m[2])] : [0, 0];
}

/** Every task, or every problem of the file (by position, as config errors are). */
export function readTasks(file: string, text: string): TasksRead {
  const jsonl = /\.jsonl$/i.test(file) || text.trimStart().startsWith("{");
  const read = jsonl ? readJsonl(file, text) : readYaml(file, text);
  if (read.ok && !read.tasks.length) return { ok: false, errors: [`${file}:1:1: no tasks`] };
  if (read.ok) return read;
  const errors = [...read.errors].sort((a, b) => {
    const [la, ca] = position(a);
    const [lb, cb] = position(b);
    return la - lb || ca - cb;
  });
  return { ok: false, errors };
}

/**
 * The starter tasks file: one entry per tool, its query left empty for a person to write. Nothing of the
 * tool's own description is given: a query made from it would find the tool by the very words it measures.
 */
export function draftTasks(tools: readonly { name: string; toolset: string }[]): string {
  const lines = [
    "# toolpacks eval tasks: one entry per tool find_tools searches here.",
    "# Write each query as a person would ask for the job, in their own words, before reading the tool's",
    "# description (a query made from it would measure nothing). A task more than one tool does well can",
    "# expect all of them: expect: [a, b]. Add as many tasks as you like; then run",
    "#   toolpacks eval CONFIG... --tasks THIS_FILE",
  ];
  for (const t of tools)
    lines.push(`- query: ""`, `  expect: [${JSON.stringify(t.name)}]   # toolset ${t.toolset}`);
  return `${lines.join("\n")}\n`;
}
