/**
 * @module `toolpacks eval`: how well find_tools finds your tools with your words, on your catalog: a tasks
 * file searched through the search a session uses, recall and MRR per toolset, the misses, and what tools/list
 * costs a turn listed, deferred and for a client; `--draft` writes a starter tasks file, `--save-catalog` the
 * upstreams' lists for later runs (`--catalog`).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type { Command } from "commander";
import type { Inventory } from "../catalog/inventory.js";
import type { Catalog } from "../catalog/types.js";
import { profileFields } from "../clients/report.js";
import { selectFor } from "../clients/select.js";
import { type EvalReport, evalText, type Surfaces } from "../eval/format.js";
import { evaluateTasks, searchedTools, wholeCatalog } from "../eval/run.js";
import { draftTasks, readTasks, type Task } from "../eval/tasks.js";
import { listFigure } from "../report.js";
import type { Refresh, Resolution } from "../resolve.js";
import type { Selection } from "../selection.js";
import { catalogOrExit, toolsetsToolOn } from "./common.js";
import { finish } from "./live.js";
import { clientProfile, type Extras, servedResolution, sessionExtras } from "./served.js";
import { withInventory, writeSnapshot } from "./snapshot.js";
import { exitOnBadCatalog } from "./toolsets.js";

interface EvalOptions {
  tasks?: string;
  select?: string;
  client?: string;
  clientVersion?: string;
  catalog?: string;
  saveCatalog?: string;
  json?: boolean;
  minRecall1?: string;
  minRecall5?: string;
  draft?: boolean;
  force?: boolean;
  toolsetsTool: boolean;
}

type Outcome =
  | { kind: "errors"; errors: string[] }
  | { kind: "draft"; text: string }
  | { kind: "saved" }
  | { kind: "report"; report: EvalReport; passed: boolean };

function fail(message: string): never {
  process.stderr.write(`toolpacks eval: ${message}\n`);
  process.exit(2);
}

function floor(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const x = Number(value);
  if (!Number.isFinite(x) || x < 0 || x > 1) fail(`${name} takes a number from 0 to 1, not "${value}"`);
  return x;
}

/** The selection searched: `--select` as a URL would have it, or every toolset, every one deferred. */
function evalSelection(catalog: Catalog, query: string | undefined): Selection {
  if (query === undefined) return wholeCatalog(catalog, true);
  const r = selectFor(catalog, query);
  if (!r.ok) fail(`bad selection: ${r.error}`);
  return r.selection;
}

function readTasksOrExit(file: string): Task[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    fail(`${file}: ${(err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : "cannot be read"}`);
  }
  const read = readTasks(file, text);
  if (read.ok) return read.tasks;
  for (const e of read.errors) process.stderr.write(`${e}\n`);
  process.stderr.write(`${read.errors.length} error(s)\n`);
  process.exit(2);
}

/** tools/list three ways, for the selection's toolsets: all listed, as deferred, as `--client` is served. */
async function surfacesOf(
  catalog: Catalog,
  resolution: Resolution,
  opts: EvalOptions,
  inventory: Inventory,
  refresh: Refresh,
  extras: Extras,
): Promise<Surfaces> {
  const listed = listFigure(resolution, extras(resolution), false);
  const deferred = listFigure(resolution, extras(resolution));
  if (opts.client === undefined) return { listed, deferred };
  const { profile } = clientProfile(catalog, opts.client, opts.clientVersion);
  const base =
    opts.select === undefined
      ? { ok: true as const, selection: wholeCatalog(catalog, false) }
      : selectFor(catalog, opts.select, {}, profile);
  if (!base.ok) fail(`bad selection: ${base.error}`);
  const selection = profile ? { ...base.selection, profile } : base.selection;
  const served = await servedResolution(catalog, selection, inventory, refresh, extras);
  const figure = listFigure(served.resolution, extras(served.resolution));
  const fields = profileFields(selection, served.resolution, figure);
  return {
    listed,
    deferred,
    client: {
      ...figure,
      client: opts.client,
      ...(fields.client_profile ? { profile: fields.client_profile } : {}),
      ...(fields.deferred_by_profile ? { deferred_by_profile: fields.deferred_by_profile } : {}),
    },
  };
}

export function registerEval(program: Command): void {
  program
    .command("eval")
    .description("measure how well find_tools finds your tools for your tasks (recall@1, recall@5, MRR)")
    .argument("<config...>", "packs.yaml files")
    .option("--tasks <file>", "the tasks: YAML or JSONL entries {query, expect: [tool, ...], toolset?}")
    .option(
      "--select <query>",
      "the URL query whose deferred toolsets are searched (default: every toolset, deferred)",
    )
    .option("--client <name>", "also show what tools/list costs a client that sends this clientInfo.name")
    .option("--client-version <version>", "with --client: the clientInfo.version it sends")
    .option("--catalog <file>", "use a saved catalog instead of starting the upstreams")
    .option("--save-catalog <file>", "write what the upstreams list to this file (for --catalog later)")
    .option("--json", "print the figures as JSON")
    .option("--min-recall1 <x>", "exit 1 when recall@1 is below x (0 to 1)")
    .option("--min-recall5 <x>", "exit 1 when recall@5 is below x (0 to 1)")
    .option(
      "--draft",
      "write a starter tasks file (to --tasks FILE, else stdout): one entry per tool, queries empty",
    )
    .option("--force", "with --draft: replace an existing tasks file")
    .option(
      "--no-toolsets-tool",
      "count tools/list without list_server_toolsets (as serve --no-toolsets-tool)",
    )
    .action(async (files: string[], opts: EvalOptions) => {
      const catalog = catalogOrExit(files);
      const min1 = floor("--min-recall1", opts.minRecall1);
      const min5 = floor("--min-recall5", opts.minRecall5);
      if (opts.catalog !== undefined && opts.saveCatalog !== undefined)
        fail("--catalog reads a saved catalog and --save-catalog writes one: give one of them");
      if (opts.draft && opts.tasks !== undefined && existsSync(opts.tasks) && !opts.force)
        fail(`${opts.tasks} exists (pass --force to replace it)`);
      if (!opts.draft && opts.tasks === undefined && opts.saveCatalog === undefined)
        fail("give --tasks FILE (or --draft to write one, or --save-catalog FILE)");
      const tasks = !opts.draft && opts.tasks !== undefined ? readTasksOrExit(opts.tasks) : [];
      const selection = evalSelection(catalog, opts.select);
      const extras = sessionExtras(toolsetsToolOn(opts.toolsetsTool));
      const out = await withInventory(catalog, opts.catalog, async (inventory, refresh): Promise<Outcome> => {
        const served = await servedResolution(catalog, selection, inventory, refresh, extras);
        if (opts.saveCatalog !== undefined) writeSnapshot(opts.saveCatalog, served.inventory);
        if (opts.draft) return { kind: "draft", text: draftTasks(searchedTools(served.resolution)) };
        if (opts.tasks === undefined) return { kind: "saved" };
        const evaluated = evaluateTasks(served.resolution, tasks);
        if (!evaluated.ok) return { kind: "errors", errors: evaluated.errors };
        const surfaces = await surfacesOf(
          catalog,
          served.resolution,
          opts,
          served.inventory,
          refresh,
          extras,
        );
        const { scores } = evaluated;
        const passed =
          (min1 === undefined || scores.overall.recall_at_1 >= min1) &&
          (min5 === undefined || scores.overall.recall_at_5 >= min5);
        const report: EvalReport = {
          selection: opts.select ?? "everything",
          tasks: tasks.length,
          tools: evaluated.tools,
          toolsets: evaluated.toolsets,
          ...scores,
          surfaces,
          ...(min1 !== undefined || min5 !== undefined
            ? {
                thresholds: {
                  ...(min1 !== undefined ? { min_recall1: min1 } : {}),
                  ...(min5 !== undefined ? { min_recall5: min5 } : {}),
                  passed,
                },
              }
            : {}),
        };
        return { kind: "report", report, passed };
      }).catch(exitOnBadCatalog);
      if (out.kind === "errors") {
        for (const e of out.errors) process.stderr.write(`${e}\n`);
        process.stderr.write(`${out.errors.length} error(s)\n`);
        process.exit(2);
      }
      if (out.kind === "draft") {
        if (opts.tasks === undefined) return finish(out.text, 0);
        writeFileSync(opts.tasks, out.text);
        process.stderr.write(
          `wrote ${opts.tasks}: fill in each query, then run with --tasks ${opts.tasks}\n`,
        );
        return finish("", 0);
      }
      if (out.kind === "saved") {
        process.stderr.write(`wrote ${opts.saveCatalog}\n`);
        return finish("", 0);
      }
      const text = opts.json ? `${JSON.stringify(out.report, null, 2)}\n` : `${evalText(out.report)}\n`;
      await finish(text, out.passed ? 0 : 1);
    });
}
