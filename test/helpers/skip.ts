/**
 * Tests that need a program this machine lacks are skipped, and say so: the reason and how to run them go in the
 * test's name (vitest lists skipped tests by name) and once on stderr when the file loads.
 */
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

export function unless(missing: string | undefined, name: string): string {
  if (missing === undefined) return name;
  process.stderr.write(`skipped "${name}": ${missing}\n`);
  return `${name} [skipped: ${missing}]`;
}

/** The program as a spawn by name would find it on PATH, or undefined. */
export function onPath(program: string, path = process.env.PATH ?? ""): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, program), constants.X_OK);
      return join(dir, program);
    } catch {}
  }
  return undefined;
}

/**
 * Why a test that needs a system service cannot run here, naming the command that installs it; undefined when it
 * can. In CI (.ci/run installs every one) it always runs, and fails if the service is missing.
 */
export function missingService(found: unknown, install: string, what: string): string | undefined {
  return found || process.env.CI
    ? undefined
    : `${what} is not installed: ${install} (.ci/run does), then run this file again`;
}
