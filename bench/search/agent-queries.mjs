/** @module The agent's-query measure: what a writer playing the agent is given, and how its queries are recorded. */
// Usage:
//   node bench/search/agent-queries.mjs prepare DIR [--opaque KEYFILE] [--seed N]
//     writes DIR/tools-list.json (tools/list of the whole catalog deferred, as a session sees it) and
//     DIR/tasks-a.json, DIR/tasks-b.json ({id, task} of every labelled task, shuffled, split in two halves);
//     with --opaque the ids are t001… in the shuffled order, and KEYFILE (keep it out of DIR, away from the
//     writer) maps them back to the tasks' own ids
//   node bench/search/agent-queries.mjs add NAME "WRITER" DIR/tools-list.json [--key KEYFILE] DIR/out-a.json …
//     records the writer's {id: query} files as pass NAME in bench/data/agent-queries.json, with the
//     tools/list it was given and the commit it is first scored at; a name already recorded is refused
// The protocol (who may read what) is in bench/search/README.md, "Queries as an agent writes them".
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { loadHoldout, loadHoldout2, loadJson, rng, root, servedCatalog } from "./lib.mjs";

export const AGENT_QUERIES = "bench/data/agent-queries.json";

/** Every labelled task: queries.json, then the holdout sets. */
function allTasks() {
  return [...loadJson("bench/data/queries.json").queries, ...loadHoldout(), ...loadHoldout2()];
}

/** The tools/list a session with the whole catalog deferred is given: all a writer may know of the server. */
export async function deferredToolsList() {
  const { listsOf } = await import("../../dist/proxy/lists.js");
  const { deferred } = await servedCatalog(loadJson("bench/data/catalog.json"));
  return listsOf(deferred, true).tools;
}

async function prepare(dir, keyFile, seed) {
  // The key must stay out of the writer's reach: never inside DIR (checked before anything is written).
  if (keyFile && resolve(keyFile).startsWith(`${resolve(dir)}/`))
    throw new Error("the key file must not be in DIR");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "tools-list.json"), `${JSON.stringify(await deferredToolsList(), null, 1)}\n`);
  // Shuffled, development and blind tasks mixed, labels left out. Without a key file the ids stay (q…, h…,
  // k…: the file a task comes from shows in its prefix), so the writer is told nothing of the sets, but
  // could guess them; with one, the ids are opaque and the key that maps them back stays with the caller.
  const tasks = allTasks().map((q) => ({ id: q.id, task: q.query }));
  const r = rng(seed);
  for (let i = tasks.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [tasks[i], tasks[j]] = [tasks[j], tasks[i]];
  }
  if (keyFile) {
    const key = {};
    tasks.forEach((t, i) => {
      const opaque = `t${String(i + 1).padStart(3, "0")}`;
      key[opaque] = t.id;
      t.id = opaque;
    });
    writeFileSync(keyFile, `${JSON.stringify(key, null, 1)}\n`);
  }
  const half = Math.ceil(tasks.length / 2);
  writeFileSync(join(dir, "tasks-a.json"), `${JSON.stringify(tasks.slice(0, half), null, 1)}\n`);
  writeFileSync(join(dir, "tasks-b.json"), `${JSON.stringify(tasks.slice(half), null, 1)}\n`);
  console.log(`${tasks.length} tasks and the tools/list written to ${dir}`);
}

async function add(name, writer, seenFile, files, keyFile) {
  const written = Object.assign({}, ...files.map((f) => JSON.parse(readFileSync(f, "utf8"))));
  const key = keyFile ? JSON.parse(readFileSync(keyFile, "utf8")) : null;
  if (key) {
    const unknown = Object.keys(written).filter((id) => !(id in key));
    if (unknown.length) throw new Error(`ids not in the key: ${unknown.join(", ")}`);
  }
  const queries = key ? Object.fromEntries(Object.entries(written).map(([id, q]) => [key[id], q])) : written;
  const missing = allTasks().filter((q) => typeof queries[q.id] !== "string" || !queries[q.id].trim());
  if (missing.length) throw new Error(`no query for ${missing.map((q) => q.id).join(", ")}`);
  const path = join(root, AGENT_QUERIES);
  const data = existsSync(path) ? JSON.parse(readFileSync(path, "utf8")) : { passes: [] };
  // A pass is recorded and scored once: a second one under the same name would hide the first.
  if (data.passes.some((p) => p.name === name)) throw new Error(`pass ${name} is already recorded`);
  const pass = {
    name,
    writer,
    date: new Date().toISOString().slice(0, 10),
    // The code the pass was first scored with, and the tools/list the writer was given.
    commit: execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).trim(),
    seen: JSON.parse(readFileSync(seenFile, "utf8")),
    queries,
  };
  data.passes.push(pass);
  writeFileSync(path, `${JSON.stringify(data, null, 1)}\n`);
  console.log(`pass ${name}: ${Object.keys(queries).length} queries recorded in ${AGENT_QUERIES}`);
}

/**
 * The words of a tools/list a writer reads: each tool's name, title and description, and its parameters'
 * names and descriptions. A pass is stale when these differ from what is served now; a bound such as a
 * `maxLength` is not compared, as it does not change what a model writes in a three-word query.
 */
export function wordsOf(toolsList) {
  return JSON.stringify(
    toolsList.tools.map((t) => [
      t.name,
      t.title,
      t.description,
      Object.entries(t.inputSchema?.properties ?? {}).map(([k, v]) => [k, v?.description]),
    ]),
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [command, ...args] = process.argv.slice(2);
  const usage = (why) => {
    if (why) console.error(why);
    console.error(
      "usage: agent-queries.mjs prepare DIR [--opaque KEYFILE] [--seed N] | add NAME WRITER DIR/tools-list.json [--key KEYFILE] FILE…",
    );
    process.exit(2);
  };
  // An option's value must be there: `--opaque` alone would otherwise write the tasks' own ids.
  const option = (flag) => {
    const i = args.indexOf(flag);
    if (i < 0) return undefined;
    const value = args[i + 1];
    if (value === undefined || value.startsWith("--")) usage(`${flag} needs a value`);
    args.splice(i, 2);
    return value;
  };
  const keyFile = option(command === "prepare" ? "--opaque" : "--key");
  const seedText = command === "prepare" ? option("--seed") : undefined;
  if (seedText !== undefined && !/^\d+$/.test(seedText)) usage("--seed needs a whole number");
  const seed = Number(seedText ?? 7);
  if (args.some((a) => a.startsWith("--"))) usage(`unknown option: ${args.find((a) => a.startsWith("--"))}`);
  if (command === "prepare" && args.length === 1) await prepare(args[0], keyFile, seed);
  else if (command === "add" && args.length >= 4)
    await add(args[0], args[1], args[2], args.slice(3), keyFile);
  else usage();
}
