/**
 * toolpacks installed the way README says, outside this repository: `npm pack`, then `npm install -g` of the
 * tarball (into a temp prefix), then the `toolpacks` bin. The tarball comes from the repository; its dependencies
 * from npm's cache or the registry. Nothing here may resolve a module from the repository's node_modules.
 */
import { execFile, spawn } from "node:child_process";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ROOT, tempDir } from "../helpers/proc.js";

const run = promisify(execFile);
const tmp = tempDir();
const prefix = join(tmp.dir, "global");
const bin = join(prefix, "bin", "toolpacks");
let files: string[] = [];
let installLog = "";

beforeAll(async () => {
  // `npm test` has built dist; pack it as it is (prepack would build again under the other tests' feet).
  const packed = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", tmp.dir], {
    cwd: ROOT,
  });
  const [info] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
  files = info!.files.map((f) => f.path);
  const install = await run(
    "npm",
    [
      "install",
      "-g",
      "--prefix",
      prefix,
      "--no-audit",
      "--no-fund",
      "--prefer-offline",
      join(tmp.dir, info!.filename),
    ],
    { cwd: tmp.dir, env: { ...process.env, npm_config_loglevel: "warn" } },
  );
  installLog = install.stdout + install.stderr;
  // The upstream runs from the temp folder too, with the SDK that toolpacks brought as its dependency.
  cpSync(
    join(ROOT, "test/fixtures/echo-server.mjs"),
    join(prefix, "lib/node_modules/toolpacks/echo-server.mjs"),
  );
  tmp.file(
    "packs.yaml",
    `upstreams:\n  echo: { command: node, args: ["${join(prefix, "lib/node_modules/toolpacks/echo-server.mjs")}"] }\n`,
  );
}, 300_000);
afterAll(() => tmp.cleanup());

describe("the packed package", () => {
  test("ships the built CLI, the schema and the prebuilt validator, and no sources, tests or maps", () => {
    for (const f of [
      "dist/cli.js",
      "dist/cli-serve-run.js",
      "dist/index.js",
      "dist/index.d.ts",
      "dist/config/packs-validator.js",
      "dist/ui/index.html",
      "dist/ui/console.js",
      "dist/ui/console.css",
    ])
      expect(files).toContain(f);
    expect(files).toContain("schema/packs.schema.json");
    expect(files.filter((f) => /^(src|test|bench|scripts|docs)\//.test(f) || f.endsWith(".map"))).toEqual([]);
  });

  test("installs globally from its tarball without a warning", () => {
    expect(installLog).not.toMatch(/npm warn/i);
  });

  test("the installed bin checks a config", async () => {
    const { stdout } = await run(bin, ["check", "packs.yaml"], { cwd: tmp.dir });
    expect(stdout).toMatch(/^ok: packs\.yaml: 1 upstream/);
    expect((await run(bin, ["--version"], { cwd: tmp.dir })).stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  test("the installed bin serves the console's page and script from the package", async () => {
    const child = spawn(bin, ["serve", "--port", "0", join(tmp.dir, "packs.yaml")], {
      cwd: tmp.dir,
      stdio: ["ignore", "ignore", "pipe"],
    });
    try {
      const base = await new Promise<string>((ok, fail) => {
        let err = "";
        child.stderr!.on("data", (d: Buffer) => {
          err += d.toString();
          const m = /console on (http:\/\/[^\s/]+)/.exec(err);
          if (m) ok(m[1]!);
        });
        child.once("exit", (code) => fail(new Error(`serve exited with ${code}: ${err}`)));
      });
      for (const path of ["/ui/", "/ui/console.js", "/ui/console.css"])
        expect((await fetch(`${base}${path}`)).status, path).toBe(200);
    } finally {
      if (child.exitCode === null) {
        const gone = new Promise((done) => child.once("exit", done));
        child.kill("SIGTERM");
        await gone;
      }
    }
  });

  test("the installed bin serves a stdio session: initialize and tools/list", async () => {
    const transport = new StdioClientTransport({
      command: bin,
      args: ["serve", "--transport", "stdio", join(tmp.dir, "packs.yaml")],
      cwd: tmp.dir,
      stderr: "ignore",
    });
    const client = new Client({ name: "pack-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      expect(client.getServerVersion()?.name).toBe("toolpacks");
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["echo", "list_server_toolsets"]);
    } finally {
      await client.close();
    }
  });
});
