/** @module `ui:` (the browser console): `true`, `false` or `{enabled, path}`, each key from the first file that sets it. */
import type { LoadedFile } from "../config/load.js";
import type { UiSettings } from "./types.js";

export function uiOf(files: readonly LoadedFile[]): UiSettings {
  let enabled: boolean | undefined;
  let path: string | undefined;
  for (const f of files) {
    const ui = f.config.ui;
    if (ui === undefined) continue;
    const spec = typeof ui === "boolean" ? { enabled: ui } : ui;
    enabled ??= spec.enabled;
    path ??= spec.path;
  }
  return { ...(enabled !== undefined ? { enabled } : {}), ...(path !== undefined ? { path } : {}) };
}
