/**
 * @module `toolpacks advise`: which toolsets are worth what they cost. Joins each toolset's ≈tokens a turn with
 * how often it was called (the audit log, or a running toolpacks' /metrics) and suggests a change to the user's
 * packs.yaml as a unified diff that keeps its comments and layout; `--write` applies it once check passes.
 */
import { readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import type { Command } from "commander";
import { unifiedDiff } from "../advise/diff.js";
import { applyEdits } from "../advise/edit.js";
import { type AdviseReport, adviseText } from "../advise/format.js";
import { listsFrom, savingOf } from "../advise/saving.js";
import { DEFAULT_THRESHOLDS, type Edit, suggest } from "../advise/suggest.js";
import { readMetrics, type Usage, usageFromAudit, usageFromMetrics } from "../advise/usage.js";
import { compileTexts } from "../catalog/load.js";
import type { Catalog } from "../catalog/types.js";
import { formatConfigError, locate } from "../config/errors.js";
import { everythingSelection, toolsetFigures } from "../report.js";
import { resolve } from "../resolve.js";
import { catalogOrExit, toolsetsToolOn } from "./common.js";
import { finish } from "./live.js";
import { sessionExtras } from "./served.js";
import { withInventory } from "./snapshot.js";
import { exitOnBadCatalog } from "./toolsets.js";

interface AdviseOptions {
  audit?: string;
  metrics?: string;
  period?: string;
  catalog?: string;
  bigTokens: string;
  rare: string;
  most: string;
  json?: boolean;
  write?: boolean;
  toolsetsTool: boolean;
}

function fail(message: string): never {
  process.stderr.write(`toolpacks advise: ${message}\n`);
  process.exit(2);
}

function number(name: string, value: string, min: number, max: number): number {
  const x = Number(value);
  if (!Number.isFinite(x) || x < min || x > max)
    fail(`${name} takes a number from ${min} to ${max}, not "${value}"`);
  return x;
}

/** One /metrics page, with TOOLPACKS_METRICS_TOKEN as the bearer token when set (never printed). */
async function fetchMetrics(url: string): Promise<string> {
  const token = process.env.TOOLPACKS_METRICS_TOKEN;
  const res = await fetch(url, token ? { headers: { authorization: `Bearer ${token}` } } : {}).catch(
    (err: Error) => fail(`${url}: ${err.message}`),
  );
  if (!res.ok)
    fail(`${url}: HTTP ${res.status}${res.status === 401 ? " (set TOOLPACKS_METRICS_TOKEN)" : ""}`);
  return res.text();
}

async function usageOf(opts: AdviseOptions): Promise<Usage> {
  if ((opts.audit === undefined) === (opts.metrics === undefined))
    fail("give one of --audit FILE (the audit log) or --metrics URL (a running toolpacks' /metrics)");
  if (opts.audit !== undefined) {
    let text: string;
    try {
      text = readFileSync(opts.audit, "utf8");
    } catch (err) {
      fail(
        `${opts.audit}: ${(err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : "cannot be read"}`,
      );
    }
    const usage = usageFromAudit(opts.audit, text);
    if (usage.skipped)
      process.stderr.write(`${opts.audit}: ${usage.skipped} line(s) that are not audit lines skipped\n`);
    return usage;
  }
  const url = opts.metrics!;
  if (!/^https?:\/\//.test(url)) fail(`--metrics takes an http(s) URL, not "${url}"`);
  if (opts.period === undefined) return usageFromMetrics(url, readMetrics(await fetchMetrics(url)));
  const seconds = number("--period", opts.period, 1, 86_400);
  const before = readMetrics(await fetchMetrics(url));
  process.stderr.write(`read ${url}; reading it again in ${seconds} s…\n`);
  await new Promise((done) => setTimeout(done, seconds * 1000));
  return usageFromMetrics(url, readMetrics(await fetchMetrics(url)), before);
}

/** The config files with the edits made, each edit in the file that first declares its toolset. */
function editedTexts(catalog: Catalog, files: readonly string[], edits: readonly Edit[]) {
  const texts = files.map((file) => ({ file, text: readFileSync(file, "utf8") }));
  const skipped: AdviseReport["skipped"][number][] = [];
  const applied: Edit[] = [];
  const after = texts.map(({ file, text }) => {
    const mine = edits.filter((e) => locate(catalog.toolset.get(e.toolset)?.where ?? "").file === file);
    if (!mine.length) return { file, text };
    const edited = applyEdits(text, mine);
    skipped.push(...edited.skipped);
    applied.push(...edited.applied);
    return { file, text: edited.text };
  });
  return { before: texts, after, skipped, applied };
}

/** Writes the file in one step (a sibling temporary file renamed over it), keeping its mode. */
function replaceFile(file: string, text: string): void {
  const tmp = `${file}.toolpacks-${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: statSync(file).mode & 0o777 });
  renameSync(tmp, file);
}

export function registerAdvise(program: Command): void {
  program
    .command("advise")
    .description(
      "suggest which toolsets to turn off or defer, from what each costs a turn and how often it is called",
    )
    .argument("<config...>", "packs.yaml files")
    .option("--audit <file>", "the audit log (audit.file) of the sessions to learn from")
    .option("--metrics <url>", "a running toolpacks' /metrics (TOOLPACKS_METRICS_TOKEN: its bearer token)")
    .option(
      "--period <seconds>",
      "with --metrics: read it twice, this far apart, and use what happened between",
    )
    .option(
      "--catalog <file>",
      "use a saved catalog (toolpacks eval --save-catalog) instead of the live upstreams",
    )
    .option(
      "--big-tokens <n>",
      "≈tokens a turn from which a rarely called toolset is deferred",
      String(DEFAULT_THRESHOLDS.bigTokens),
    )
    .option(
      "--rare <percent>",
      "below this share of its sessions calling it, a toolset is rarely called",
      "20",
    )
    .option("--most <percent>", "from this share of its sessions calling it, a toolset is kept", "50")
    .option("--json", "print the report as JSON")
    .option("--write", "apply the suggested change to the files (only if check passes on the result)")
    .option(
      "--no-toolsets-tool",
      "count tools/list without list_server_toolsets (as serve --no-toolsets-tool)",
    )
    .action(async (files: string[], opts: AdviseOptions) => {
      const catalog = catalogOrExit(files);
      const thresholds = {
        bigTokens: number("--big-tokens", opts.bigTokens, 1, 1e9),
        rare: number("--rare", opts.rare, 0, 100) / 100,
        most: number("--most", opts.most, 0, 100) / 100,
      };
      const usage = await usageOf(opts);
      const extras = sessionExtras(toolsetsToolOn(opts.toolsetsTool));
      const report = await withInventory(
        catalog,
        opts.catalog,
        async (inventory, refresh): Promise<AdviseReport | { errors: string[] }> => {
          const everything = resolve(catalog, everythingSelection(catalog), inventory);
          const tokens = new Map(
            [...toolsetFigures(catalog, everything)].map(([name, f]) => [name, f.approx_tokens] as const),
          );
          const rows = suggest(catalog, tokens, usage, thresholds);
          const edits = rows.flatMap((r) => (r.edit ? [r.edit] : []));
          const { before, after, skipped, applied } = editedTexts(catalog, files, edits);
          const diff = before.map((b, i) => unifiedDiff(b.file, b.text, after[i]!.text)).join("");
          const compiled = compileTexts(after, process.env);
          // Never exit with the upstreams open: the error goes out once they are closed.
          if (!compiled.ok) return { errors: compiled.errors.map(formatConfigError) };
          const saving = applied.length
            ? await savingOf(catalog, compiled.catalog, usage, listsFrom(inventory, refresh, extras))
            : undefined;
          const changed = after.filter((a, i) => a.text !== before[i]!.text);
          if (opts.write) for (const c of changed) replaceFile(c.file, c.text);
          const out: AdviseReport = {
            usage: { from: usage.from, sessions: usage.sessions, calls: usage.calls },
            toolsets: rows,
            changes: applied,
            skipped,
            ...(saving ? { saving } : {}),
            diff,
            ...(opts.write ? { written: changed.map((c) => c.file) } : {}),
          };
          return out;
        },
      ).catch(exitOnBadCatalog);
      if ("errors" in report) {
        for (const e of report.errors) process.stderr.write(`${e}\n`);
        fail("the suggested change does not pass check; nothing is written");
      }
      await finish(
        opts.json ? `${JSON.stringify(report, null, 2)}\n` : `${adviseText(report, !!opts.write)}\n`,
        0,
      );
    });
}
