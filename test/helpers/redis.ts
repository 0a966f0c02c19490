/** A real redis-server for tests: its own loopback port and temp dir, stopped and removed afterwards. */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { missingService, onPath } from "./skip.js";

/** Why the tests that start a redis-server cannot run on this machine; undefined when they can. */
export const NO_REDIS = missingService(
  onPath("redis-server"),
  "apt-get install -y redis-server",
  "redis-server",
);

export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** SIGKILL (a crash) by default; resolves once the process is gone. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port and dir (with `durable`, what was acknowledged comes back). */
  start(): Promise<void>;
  pause(): void;
  resume(): void;
  /** Stops it and removes its dir. */
  cleanup(): Promise<void>;
}

export interface RedisServerOptions {
  /** AOF with fsync on every write, so a restart keeps every acknowledged write. */
  readonly durable?: boolean;
  readonly password?: string;
}

const running = new Set<ChildProcess>();
process.on("exit", () => {
  for (const p of running) p.kill("SIGKILL");
});

export function freePort(): Promise<number> {
  return new Promise((ok) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => ok(port));
    });
  });
}

export async function startRedis(options: RedisServerOptions = {}): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "toolpacks-redis-"));
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--dir", dir];
  args.push(
    ...(options.durable ? ["--appendonly", "yes", "--appendfsync", "always"] : ["--appendonly", "no"]),
  );
  if (options.password) args.push("--requirepass", options.password);
  let proc: ChildProcess | undefined;

  const start = () =>
    new Promise<void>((ok, fail) => {
      const p = spawn("redis-server", args, { stdio: ["ignore", "pipe", "pipe"] });
      proc = p;
      running.add(p);
      p.once("exit", () => running.delete(p));
      let out = "";
      const timer = setTimeout(() => fail(new Error(`redis-server did not start: ${out}`)), 10_000);
      p.stdout!.on("data", (c: Buffer) => {
        out += c.toString();
        if (/Ready to accept connections/.test(out)) {
          clearTimeout(timer);
          ok();
        }
      });
      p.once("error", (e) => {
        clearTimeout(timer);
        fail(e);
      });
      p.once("exit", (code) => {
        clearTimeout(timer);
        fail(new Error(`redis-server exited with ${code}: ${out}`));
      });
    });

  const stop = async (signal: NodeJS.Signals = "SIGKILL") => {
    const p = proc;
    proc = undefined;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const gone = new Promise<void>((ok) => p.once("exit", () => ok()));
    p.kill("SIGCONT");
    p.kill(signal);
    await gone;
  };

  await start();
  return {
    port,
    url: `redis://${options.password ? `:${options.password}@` : ""}127.0.0.1:${port}/0`,
    stop,
    start,
    pause: () => proc?.kill("SIGSTOP"),
    resume: () => proc?.kill("SIGCONT"),
    cleanup: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Waits for a condition (a state change in another process), failing after `ms`. */
export async function until(cond: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}
