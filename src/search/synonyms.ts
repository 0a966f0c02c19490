/** @module Query expansion: the words people use for a task, mapped to the words tool definitions use. */
import { stem, WHOLE } from "./tokenize.js";

/**
 * A query word → words a tool that does that job tends to be named or described with. One-way on
 * purpose ("forget" should find delete_*, a query for "delete" need not find "forget"). Generic task and
 * software vocabulary only, no tool names: it must hold for catalogs it was not written against.
 */
const TABLE: Readonly<Record<string, string>> = {
  // creating
  add: "create new insert append",
  new: "create add",
  make: "create new",
  create: "add new",
  leave: "create add post",
  open: "create read navigate",
  save: "write store create",
  store: "set save write",
  write: "create save",
  record: "create add",
  remember: "memory create store",
  draft: "create write",
  // removing
  forget: "delete remove",
  remove: "delete",
  delete: "remove",
  erase: "delete remove",
  drop: "delete remove",
  clear: "delete remove",
  purge: "delete remove",
  trash: "delete archive",
  // reading
  show: "get list read view",
  view: "get read show",
  see: "get read show",
  display: "get read show",
  fetch: "get read retrieve",
  retrieve: "get read fetch",
  get: "retrieve fetch read",
  read: "get retrieve view",
  look: "search find get",
  which: "list",
  all: "list",
  list: "get",
  exist: "list",
  // finding
  find: "search get query lookup",
  search: "find query lookup",
  lookup: "search find",
  locate: "search find",
  // changing
  change: "update edit modify set",
  edit: "update modify change",
  modify: "update edit",
  set: "update change",
  update: "edit modify patch",
  rename: "move update",
  move: "transfer rename",
  // running and stopping
  run: "execute start trigger",
  execute: "run",
  trigger: "run start",
  start: "run launch",
  launch: "start run",
  stop: "terminate kill cancel",
  kill: "terminate stop force",
  terminate: "kill stop",
  cancel: "stop delete",
  // talking
  send: "post email message",
  post: "send publish create",
  email: "mail message",
  mail: "email message",
  reply: "respond comment thread",
  respond: "reply comment",
  say: "message post send",
  said: "message history",
  message: "post send",
  note: "comment observation",
  fact: "observation",
  // time
  recent: "latest history last",
  latest: "recent last",
  last: "latest recent",
  history: "log recent",
  // things
  folder: "directory",
  dir: "directory",
  directory: "folder",
  repo: "repository project",
  repository: "repo project",
  pr: "pull request pull_request",
  mr: "merge request merge_request",
  env: "environment variable",
  environment: "env",
  variable: "env",
  db: "database",
  k8s: "kubernetes kubectl cluster",
  kubernetes: "kubectl k8s",
  space: "size",
  big: "size",
  large: "size",
  drive: "direction route",
  route: "direction",
  near: "local place nearby",
  nearby: "local place near",
  picture: "image photo media",
  photo: "image picture media",
  image: "picture photo media",
  screenshot: "screen capture snapshot",
  log: "logs output",
  output: "log result",
  doc: "documentation docs",
  docs: "documentation doc",
  documentation: "docs doc",
  mean: "explain describe documentation",
  explain: "describe documentation",
  watch: "monitor track subscribe",
  monitor: "watch track",
  track: "monitor watch",
  dropdown: "select option",
  pick: "select choose option",
  choose: "select option",
  press: "key click",
  tap: "click press",
  type: "fill input enter",
  enter: "type fill input",
  column: "field",
  row: "record",
  tag: "label",
  label: "tag",
  ticket: "issue",
  bug: "issue error",
  error: "issue event exception",
  crash: "error issue",
  sprint: "cycle iteration",
  // third round (development misses: the first writer's tasks and the holdout's odd half)
  mouse: "hover click",
  rule: "filter",
  many: "count stats usage",
  next: "more page",
  sub: "subtask child parent",
  react: "reaction emoji",
  caption: "transcript subtitle",
  subtitle: "transcript caption",
};

/** By stemmed word, the stemmed words it adds (built once; terms are compared as the index stores them). */
const EXPANSIONS: ReadonlyMap<string, readonly string[]> = new Map(
  Object.entries(TABLE).map(([word, also]) => [
    stem(word),
    also.split(" ").map((w) => (w.includes("_") ? `${WHOLE}${w}` : stem(w))),
  ]),
);

/** Every term the table can add: all a query's expansion can ever search for, however it is worded. */
export const EXPANSION_WORDS: ReadonlySet<string> = new Set([...EXPANSIONS.values()].flat());

/**
 * The terms a query's words add, each with the typed terms (or stop words) it came from; none already typed.
 * The caller weighs them less, and counts a match on one as a match on the word it came from.
 */
export function expansions(words: readonly string[], typed: ReadonlySet<string>): Map<string, string[]> {
  const added = new Map<string, string[]>();
  for (const word of words) {
    for (const extra of EXPANSIONS.get(word) ?? []) {
      if (typed.has(extra)) continue;
      const from = added.get(extra);
      if (!from) added.set(extra, [word]);
      else if (!from.includes(word)) from.push(word);
    }
  }
  return added;
}
