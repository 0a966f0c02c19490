/** The 2026-07-28 fixture (test/fixtures/modern-server.mjs) and the conformance 0.2 runner, as child processes. */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { ROOT, runScript } from "./proc.js";

export const MODERN_FIXTURE = join(ROOT, "test/fixtures/modern-server.mjs");
const RUN_MODERN = join(ROOT, "test/conformance/run-modern.mjs");

export interface ModernServer {
  readonly url: string;
  stop(): Promise<void>;
}

/** Starts modern-server.mjs over HTTP on a free loopback port and waits for the URL it prints. */
export async function startModernServer(args: string[] = []): Promise<ModernServer> {
  const proc = spawn(process.execPath, [MODERN_FIXTURE, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  proc.stderr!.on("data", (c: Buffer) => {
    err += c.toString();
  });
  const url = await new Promise<string>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`modern-server printed no URL: ${err}`)), 20_000);
    proc.stdout!.on("data", (c: Buffer) => {
      out += c.toString();
      const m = /^(http:\/\/\S+)$/m.exec(out);
      if (m) {
        clearTimeout(timer);
        ok(m[1]!);
      }
    });
    proc.once("exit", (code) => {
      clearTimeout(timer);
      fail(new Error(`modern-server exited with ${code}: ${err}`));
    });
  });
  return { url, stop: () => stopChild(proc) };
}

function stopChild(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((ok) => {
    proc.once("exit", () => ok());
    proc.kill("SIGTERM");
  });
}

export interface ConformanceRun {
  readonly code: number | null;
  readonly out: string;
  /** One row per scenario, as run-modern.mjs prints them. */
  readonly scenarios: { name: string; pass: boolean; passed: number; failed: number }[];
  /** The closing "N passed, M failed" line (scenarios). */
  readonly tally: string | undefined;
}

/** Runs test/conformance/run-modern.mjs with ARGS to its end. */
export async function runModernConformance(args: string[]): Promise<ConformanceRun> {
  const { code, stdout, stderr } = await runScript(RUN_MODERN, args);
  const out = stdout + stderr;
  const scenarios = [...stdout.matchAll(/^(PASS|FAIL) (\S+): (\d+) passed, (\d+) failed$/gm)].map((m) => ({
    name: m[2]!,
    pass: m[1] === "PASS",
    passed: Number(m[3]),
    failed: Number(m[4]),
  }));
  const tally = /^\d+ passed, \d+ failed$/m.exec(stdout)?.[0];
  return { code, out, scenarios, tally };
}
