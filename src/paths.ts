/**
 * @module Where toolpacks' own files are. Every top-level module sits one folder below the package's root: src/*.ts,
 * dist/*.js, and the chunks of the CLI bundle (dist/cli*.js, scripts/bundle-cli.mjs), so a path is resolved from
 * here and never from a module nested deeper (a nested module's own URL changes when it is bundled).
 */

/** The package's root folder (package.json, schema/, dist/). */
const PACKAGE_ROOT = new URL("../", import.meta.url);

/** A file of the package, by its path from the root (`schema/packs.schema.json`). */
export function packageFile(path: string): URL {
  return new URL(path, PACKAGE_ROOT);
}

/** Whether this code runs built (from dist/), not from src/ as the tests do. */
export const BUILT: boolean = import.meta.url.startsWith(packageFile("dist/").href);
