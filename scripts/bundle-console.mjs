// Builds the browser console into dist/ui (shipped in the package; nothing is built at install, nothing is
// fetched at run time): src/console/page/main.ts and what it imports (plain TypeScript and DOM, and the pure
// modules it shares with the server: the selection rules, the URL spelling, the client snippets) bundled into one
// minified console.js; the page, its styles and its icon copied as they are.
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { build } from "rolldown";

const root = new URL("../", import.meta.url);
const page = new URL("src/console/page/", root);
const out = new URL("dist/ui/", root);

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await build({
  input: new URL("main.ts", page).pathname,
  resolve: { extensionAlias: { ".js": [".ts", ".js"] } },
  platform: "browser",
  output: { file: new URL("console.js", out).pathname, format: "esm", minify: true },
  logLevel: "warn",
});
for (const f of ["index.html", "console.css", "icon.svg"]) copyFileSync(new URL(f, page), new URL(f, out));
