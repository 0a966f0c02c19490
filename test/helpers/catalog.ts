/** Builds catalogs and inventories from literal text, for the pure tests. */
import {
  EMPTY_OFFER,
  type Inventory,
  type ToolDef,
  type UpstreamState,
} from "../../src/catalog/inventory.js";
import { compileTexts } from "../../src/catalog/load.js";
import type { Catalog } from "../../src/catalog/types.js";
import { formatConfigError } from "../../src/config/errors.js";

export function catalogOf(yaml: string, env: Record<string, string> = {}): Catalog {
  const r = compileTexts([{ file: "packs.yaml", text: yaml }], env);
  if (!r.ok) throw new Error(r.errors.map(formatConfigError).join("\n"));
  return r.catalog;
}

export function errorsOf(
  yaml: string | { file: string; text: string }[],
  env: Record<string, string> = {},
): string[] {
  const texts = typeof yaml === "string" ? [{ file: "packs.yaml", text: yaml }] : yaml;
  const r = compileTexts(texts, env);
  return r.ok ? [] : r.errors.map(formatConfigError);
}

export function tools(...names: string[]): ToolDef[] {
  return names.map((name) => ({ name, description: `${name} tool`, inputSchema: { type: "object" } }));
}

export function inventoryOf(spec: Record<string, string[] | string>): Inventory {
  const m = new Map<string, UpstreamState>();
  for (const [u, v] of Object.entries(spec)) {
    m.set(
      u,
      typeof v === "string"
        ? { status: "unavailable", reason: v }
        : { status: "ready", ...EMPTY_OFFER, tools: tools(...v) },
    );
  }
  return m;
}
