/**
 * Tests that need a program this machine lacks are skipped, and say so: the reason and how to run them go in the
 * test's name (vitest lists skipped tests by name) and once on stderr when the file loads.
 */
export function unless(missing: string | undefined, name: string): string {
  if (missing === undefined) return name;
  process.stderr.write(`skipped "${name}": ${missing}\n`);
  return `${name} [skipped: ${missing}]`;
}
