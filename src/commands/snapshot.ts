/**
 * @module A saved catalog: what every upstream listed, written to a file (`eval --save-catalog`) so that `eval`,
 * `advise` and `toolsets` can answer later, in CI, without starting a server (`--catalog FILE`).
 */
import { readFileSync, writeFileSync } from "node:fs";
import type { Inventory, UpstreamState } from "../catalog/inventory.js";
import type { Catalog } from "../catalog/types.js";
import type { Refresh } from "../resolve.js";
import { withLive } from "./live.js";

/** The file's format marker and version. */
const SNAPSHOT_FORMAT = "toolpacks-catalog/1";

interface SnapshotFile {
  readonly format: string;
  readonly saved: string;
  readonly upstreams: Record<string, UpstreamState>;
}

/** What is kept of an upstream's state: its lists, or why it was unavailable (never a page's URL). */
function kept(state: UpstreamState): UpstreamState {
  if (state.status !== "ready") return { status: "unavailable", reason: state.reason };
  const { tools, prompts, resources, templates } = state;
  return { status: "ready", tools, prompts, resources, templates };
}

function snapshotText(inventory: Inventory, now = new Date()): string {
  const upstreams: Record<string, UpstreamState> = {};
  for (const [name, state] of inventory) upstreams[name] = kept(state);
  const file: SnapshotFile = { format: SNAPSHOT_FORMAT, saved: now.toISOString(), upstreams };
  return `${JSON.stringify(file, null, 2)}\n`;
}

export function writeSnapshot(path: string, inventory: Inventory): void {
  writeFileSync(path, snapshotText(inventory), { mode: 0o644 });
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function stateOf(v: unknown): UpstreamState | undefined {
  if (!isRecord(v)) return undefined;
  if (v.status === "unavailable") return { status: "unavailable", reason: String(v.reason ?? "") };
  if (v.status !== "ready") return undefined;
  const list = (key: string, id: string) =>
    Array.isArray(v[key]) && (v[key] as unknown[]).every((d) => isRecord(d) && typeof d[id] === "string")
      ? (v[key] as never[])
      : undefined;
  const tools = list("tools", "name");
  const prompts = list("prompts", "name") ?? [];
  const resources = list("resources", "uri") ?? [];
  const templates = list("templates", "uriTemplate") ?? [];
  return tools ? { status: "ready", tools, prompts, resources, templates } : undefined;
}

/**
 * The inventory a saved catalog gives this config: an upstream the file does not have is unavailable (and
 * says so). Throws an Error whose message says what is wrong with the file.
 */
function readSnapshot(path: string, catalog: Catalog): Inventory {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(`${path}: ${code === "ENOENT" ? "no such file" : "not JSON"}`);
  }
  if (!isRecord(data) || data.format !== SNAPSHOT_FORMAT || !isRecord(data.upstreams))
    throw new Error(
      `${path}: not a saved catalog (write one with: toolpacks eval CONFIG --save-catalog FILE)`,
    );
  const saved = data.upstreams;
  const inventory = new Map<string, UpstreamState>();
  for (const name of catalog.upstreams.keys()) {
    const state = Object.hasOwn(saved, name) ? stateOf(saved[name]) : undefined;
    if (Object.hasOwn(saved, name) && !state) throw new Error(`${path}: upstream "${name}" is malformed`);
    inventory.set(name, state ?? { status: "unavailable", reason: `not in the saved catalog ${path}` });
  }
  return inventory;
}

/**
 * Runs `use` with every upstream's lists: from a saved catalog when `saved` names one (nothing is started, and a
 * refresh gives what was saved), else from the live upstreams (started, and always closed again).
 */
export async function withInventory<T>(
  catalog: Catalog,
  saved: string | undefined,
  use: (inventory: Inventory, refresh: Refresh) => Promise<T>,
): Promise<T> {
  if (saved !== undefined) {
    const inventory = readSnapshot(saved, catalog);
    return use(inventory, async (u) => inventory.get(u) ?? { status: "unavailable", reason: "unknown" });
  }
  return withLive(catalog, ({ inventory, refresh }) => use(inventory, refresh));
}
