/** @module Where toolpacks keeps its files: `state_dir:` of the first file that sets it, else the XDG data folder. */
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve as resolvePath } from "node:path";
import type { Env } from "../config/env.js";
import type { LoadedFile } from "../config/load.js";

/** Absolute. `$XDG_DATA_HOME/toolpacks` (when set and absolute), else `~/.local/share/toolpacks`. */
export function stateDirOf(files: readonly LoadedFile[], env: Env): string {
  const file = files.find((f) => f.config.state_dir);
  if (file) return resolvePath(dirname(resolvePath(file.source.file)), file.config.state_dir!);
  const xdg = env.XDG_DATA_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, "toolpacks");
  return join(env.HOME || homedir(), ".local", "share", "toolpacks");
}
