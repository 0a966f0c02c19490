/** @module An upstream's `roots:` (paths or `file://` URIs) compiled to absolute `file://` roots. */
import { basename, resolve as resolvePath } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { ConfigError } from "../config/errors.js";
import type { Path, Source } from "../config/source.js";
import type { Root } from "./types.js";

/** Each entry as a root; a URI that is not a local `file://` one is an error at its item. */
export function compileRoots(
  entries: readonly string[],
  base: string,
  source: Source,
  path: Path,
  errors: ConfigError[],
): Root[] {
  const roots: Root[] = [];
  entries.forEach((entry, i) => {
    const file = localPath(entry, base);
    if (file === undefined) {
      errors.push(
        source.error(
          [...path, i],
          `root ${JSON.stringify(entry)} is not a filesystem path or a local file:// URI`,
          'write a path (relative to this file) or "file:///absolute/path"',
        ),
      );
      return;
    }
    const name = basename(file);
    roots.push({ uri: pathToFileURL(file).href, ...(name ? { name } : {}) });
  });
  return roots;
}

function localPath(entry: string, base: string): string | undefined {
  if (/^file:/i.test(entry)) {
    try {
      return fileURLToPath(new URL(entry));
    } catch {
      return undefined;
    }
  }
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(entry)) return undefined;
  return resolvePath(base, entry);
}
