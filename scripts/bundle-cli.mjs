// Bundles the CLI (src/cli.ts and what it imports) into dist/cli.js and its lazily loaded chunks dist/cli-*.js,
// replacing the dist/cli.js tsc wrote (run after tsc; reading the sources, it can run again on its own).
// Why: a client launches `toolpacks serve` at every start, and before its upstreams can be spawned Node had to
// resolve, read and link ~60 of our modules and yaml's ~80 files one by one (~150 ms of a ~300 ms start on a
// small machine). One file per lazy step loads in a fraction of that. Our code, yaml and commander are bundled;
// every other dependency stays external (loaded from node_modules when a path needs it, as before), so what
// test/e2e/startup.test.ts watches (the SDK, zod, ajv's compiler, prom-client, …) is still seen if it loads.
// The chunks sit in dist/ beside the modules tsc wrote, one folder below the package root like every top-level
// module (src/paths.ts resolves the package's files from there). dist/index.js (the library) is not bundled.
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { build } from "rolldown";

const root = new URL("../", import.meta.url);
const dist = new URL("dist/", root);
const pkg = JSON.parse(readFileSync(new URL("package.json", root), "utf8"));
const BUNDLED = new Set(["yaml", "commander"]);
const external = Object.keys(pkg.dependencies).filter((d) => !BUNDLED.has(d));

for (const f of readdirSync(dist)) if (/^cli-.*\.js(\.map)?$/.test(f)) rmSync(new URL(f, dist));
await build({
  input: { cli: new URL("src/cli.ts", root).pathname },
  // TypeScript sources import their siblings as `./x.js`, as tsc (and Node) want.
  resolve: { extensionAlias: { ".js": [".ts", ".js"] } },
  platform: "node",
  external: (id) => id.startsWith("node:") || external.some((d) => id === d || id.startsWith(`${d}/`)),
  // src/config/schema.ts imports the prebuilt validator by a computed URL: it stays a file of its own.
  // Not minified: it was no faster to start (the first spawn at 165–186 ms either way), and stack traces stay
  // readable.
  output: {
    dir: dist.pathname,
    format: "esm",
    entryFileNames: "[name].js",
    chunkFileNames: "cli-[name].js",
    sourcemap: true,
  },
  logLevel: "warn",
});
