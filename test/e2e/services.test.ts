/**
 * `npm install && npm test` on a machine without a system service: the test files that need one skip, and say
 * which command installs it, instead of failing in their setup.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { delimiter, join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { ROOT, tempDir } from "../helpers/proc.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

/** A PATH holding every program of this one but `program`. */
function pathWithout(program: string): string {
  const bin = join(tmp.dir, `bin-without-${program}`);
  mkdirSync(bin);
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir || !existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      if (name === program || existsSync(join(bin, name))) continue;
      symlinkSync(join(dir, name), join(bin, name));
    }
  }
  return bin;
}

/** The test files that start a program by this helper. */
function filesUsing(helper: RegExp): string[] {
  const dir = join(ROOT, "test/e2e");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".test.ts") && helper.test(readFileSync(join(dir, f), "utf8")))
    .map((f) => join("test/e2e", f));
}

test("every test file that starts a redis-server skips, naming the command that installs it, where there is none", async () => {
  const files = filesUsing(/\bstartRedis\(/);
  expect(files).toEqual(
    expect.arrayContaining(["test/e2e/state-redis.test.ts", "test/e2e/replicas-redis.test.ts"]),
  );
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: pathWithout("redis-server") };
  // Not in CI (where it would run, and fail), and not as a run inside this one (which would change how it reports).
  const runner = ["CI", "TEST", "NODE_ENV", "MODE", "PROD", "DEV", "BASE_URL", "SSR", "FORCE_TTY"];
  for (const k of Object.keys(env)) if (runner.includes(k) || k.startsWith("VITEST")) delete env[k];
  const vitest = join(ROOT, "node_modules/vitest/vitest.mjs");
  const args = [
    vitest,
    "run",
    "--reporter=default",
    "--reporter=json",
    `--outputFile.json=${join(tmp.dir, "r.json")}`,
    ...files,
  ];
  const r = await new Promise<{ code: number | null; output: string }>((done) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (c: Buffer) => {
      output += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      output += c.toString();
    });
    child.once("close", (code) => done({ code, output }));
  });
  expect(r.output).not.toContain("ENOENT");
  expect(r.code, r.output).toBe(0);
  const said = r.output.match(/redis-server is not installed: apt-get install -y redis-server/g) ?? [];
  expect(said.length).toBeGreaterThanOrEqual(files.length);
  const report = JSON.parse(readFileSync(join(tmp.dir, "r.json"), "utf8")) as {
    numFailedTests: number;
    numPassedTests: number;
    numPendingTests: number;
  };
  expect(report).toMatchObject({ numFailedTests: 0, numPassedTests: 0 });
  expect(report.numPendingTests).toBeGreaterThan(0);
});
