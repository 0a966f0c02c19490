/**
 * @module A lean stdio client transport: newline-delimited JSON-RPC over a child process's pipes.
 * Unlike the SDK's, it does not re-validate every incoming message with zod (the Protocol layer checks what it
 * uses), and it can adopt a process spawned earlier, so upstreams start while the proxy is still loading.
 * It imports nothing from the SDK at run time: a process can be spawned before the SDK is loaded.
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { Readable } from "node:stream";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

export interface SpawnSpec {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Record<string, string>;
  readonly cwd: string;
}

export function spawnUpstream(spec: SpawnSpec): ChildProcess {
  return spawn(spec.command, [...spec.args], {
    env: spec.env,
    cwd: spec.cwd,
    stdio: ["pipe", "pipe", "pipe"],
    windowsHide: true,
  });
}

export class LeanStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private child: ChildProcess | undefined;
  private buffer = "";
  private closed = false;
  private corked = false;

  /** `adopt`: a process already spawned for this spec (see prespawn.ts); otherwise one is spawned on start. */
  constructor(
    private readonly spec: SpawnSpec,
    adopt?: ChildProcess,
  ) {
    this.child = adopt;
  }

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  /** The child's stderr, for diagnostics. */
  get stderr(): Readable | null {
    return this.child?.stderr ?? null;
  }

  /** Spawns now (or adopts) so that stderr can be watched before start(). */
  ensureSpawned(): ChildProcess {
    this.child ??= spawnUpstream(this.spec);
    return this.child;
  }

  async start(): Promise<void> {
    const child = this.ensureSpawned();
    await new Promise<void>((resolve, reject) => {
      if (child.pid !== undefined && child.exitCode === null) {
        resolve();
        return;
      }
      child.once("spawn", () => resolve());
      child.once("error", reject);
    });
    child.on("error", (err) => this.onerror?.(err));
    child.once("close", () => this.finish());
    child.stdin?.on("error", (err) => this.onerror?.(err));
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (chunk: string) => this.read(chunk));
  }

  private read(chunk: string): void {
    this.buffer += chunk;
    let nl = this.buffer.indexOf("\n");
    while (nl >= 0) {
      const line = this.buffer.slice(0, nl).replace(/\r$/, "");
      this.buffer = this.buffer.slice(nl + 1);
      nl = this.buffer.indexOf("\n");
      if (!line.trim()) continue;
      let message: unknown;
      try {
        message = JSON.parse(line);
      } catch {
        this.onerror?.(new Error(`upstream wrote a line that is not JSON: ${line.slice(0, 200)}`));
        continue;
      }
      if (message && typeof message === "object" && (message as { jsonrpc?: unknown }).jsonrpc === "2.0") {
        this.onmessage?.(message as JSONRPCMessage);
      } else
        this.onerror?.(new Error(`upstream wrote a line that is not JSON-RPC 2.0: ${line.slice(0, 200)}`));
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.closed) return Promise.reject(new Error("not connected"));
    // Messages sent in one tick go out in one write: under load that is one pipe wake-up instead of many.
    if (!this.corked) {
      this.corked = true;
      stdin.cork();
      process.nextTick(() => {
        this.corked = false;
        stdin.uncork();
      });
    }
    return new Promise((resolve, reject) => {
      if (stdin.write(`${JSON.stringify(message)}\n`)) {
        resolve();
        return;
      }
      // A child that stops reading, or dies, must not leave the send pending forever.
      const done = (err?: Error) => {
        stdin.off("drain", onDrain);
        stdin.off("close", onClose);
        if (err) reject(err);
        else resolve();
      };
      const onDrain = () => done();
      const onClose = () => done(new Error("upstream closed its stdin"));
      stdin.once("drain", onDrain);
      stdin.once("close", onClose);
    });
  }

  /** Ends stdin, then SIGTERM after 2 s, then SIGKILL after 2 s more: the SDK's sequence. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || this.closed) {
      this.finish();
      return;
    }
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once("close", () => resolve());
    });
    const wait = (ms: number) => Promise.race([exited, new Promise((r) => setTimeout(r, ms).unref())]);
    try {
      child.stdin?.end();
    } catch {}
    await wait(2000);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await wait(2000);
    }
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }
}
