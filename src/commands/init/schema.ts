/**
 * @module The `$schema` line of a written packs.yaml: a reference to packs.schema.json that resolves from the
 * folder the file is written in, as the YAML language server reads it (relative to the file, or absolute).
 */
import { existsSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { packageFile } from "../../paths.js";

/** The schema of the running toolpacks. */
export const OWN_SCHEMA = fileURLToPath(packageFile("schema/packs.schema.json"));

/**
 * Where a file written at `outFile` should point for its schema: `node_modules/toolpacks/schema/packs.schema.json`
 * in its folder or the nearest parent that has one (the project's installed toolpacks), else the running
 * installation's schema. A relative path (`./…`, `../…`) when there is one; an absolute path otherwise; a
 * `file:` URL when the path holds white space or `#` (the language server reads `$schema=` up to white space).
 */
export function schemaRef(
  outFile: string,
  own = OWN_SCHEMA,
  exists: (p: string) => boolean = existsSync,
): string {
  const dir = dirname(resolve(outFile));
  let target = own;
  for (let d = dir; ; d = dirname(d)) {
    const installed = join(d, "node_modules", "toolpacks", "schema", "packs.schema.json");
    if (exists(installed)) {
      target = installed;
      break;
    }
    if (dirname(d) === d) break;
  }
  const rel = relative(dir, target);
  if (rel && !isAbsolute(rel)) {
    const posix = rel.split(sep).join("/");
    if (!/[\s#]/.test(posix)) return posix.startsWith("../") ? posix : `./${posix}`;
  }
  return /[\s#]/.test(target) ? pathToFileURL(target).href : target;
}

/** The first line of a written file. */
export const schemaLine = (ref: string) => `# yaml-language-server: $schema=${ref}`;
