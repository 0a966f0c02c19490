#!/usr/bin/env node
// Fails when a source file grows past 300 lines: a file that long holds more than one concept (style.md).
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

const MAX = 300;
const root = join(import.meta.dirname, "..", "src");
const long = [];
const walk = (dir) => {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p);
    else if (/\.(ts|mts|js|mjs)$/.test(e.name)) {
      const lines = readFileSync(p, "utf8").split("\n").length - 1;
      if (lines > MAX) long.push(`${relative(process.cwd(), p)}: ${lines} lines (at most ${MAX}; split it by concept)`);
    }
  }
};
walk(root);
if (long.length) {
  console.error(long.join("\n"));
  process.exit(1);
}
