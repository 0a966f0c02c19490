/**
 * @module A lean stdio client transport: newline-delimited JSON-RPC over a child process's pipes.
 * Unlike the SDK's, it does not re-validate every incoming message with zod (the Protocol layer checks what it
 * uses), it reads lines in linear time up to a bound, it ends the child's whole process group, and it can adopt a
 * process spawned earlier, so upstreams start while the proxy is still loading.
 * It imports nothing from the SDK at run time: a process can be spawned before the SDK is loaded.
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { Readable } from "node:stream";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { errors } from "../wire/errors.js";
import { SENT } from "../wire/peer.js";
import { DEFAULT_MAX_LINE_BYTES, LineReader, LineTooLongError, readMessageLine } from "./lines.js";
import { DEFAULT_KILL_GRACE_MS, endGroup, groupAlive } from "./process-group.js";

export interface SpawnSpec {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Record<string, string>;
  readonly cwd: string;
}

export interface StdioOptions {
  /** Names the upstream in errors (never a credential). */
  readonly name?: string;
  /** Bound on one line (one message) from the upstream; past it the transport fails and closes. */
  readonly maxLineBytes?: number;
  /** Time given to each step of ending the process group (stdin closed, then SIGTERM, then SIGKILL). */
  readonly killGraceMs?: number;
}

/** Each upstream leads a process group of its own, so that ending it ends whatever it started. */
export function spawnUpstream(spec: SpawnSpec): ChildProcess {
  return spawn(spec.command, [...spec.args], {
    env: spec.env,
    cwd: spec.cwd,
    stdio: ["pipe", "pipe", "pipe"],
    windowsHide: true,
    detached: true,
  });
}

export class LeanStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private child: ChildProcess | undefined;
  private closed = false;
  private corked = false;
  private started: Promise<void> | undefined;
  /** The close in progress or done (set by the first close()). */
  private closing: Promise<void> | undefined;
  private spawnError: Error | undefined;
  /** Ids of requests sent and not answered yet: failed with the reason when the transport fails. */
  private readonly unanswered = new Set<string | number>();
  /** Why the transport failed on its own (a line over the bound), if it did. */
  failure: Error | undefined;

  /** `adopt`: a process already spawned for this spec (see prespawn.ts); otherwise one is spawned on start. */
  constructor(
    private readonly spec: SpawnSpec,
    adopt?: ChildProcess,
    private readonly options: StdioOptions = {},
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
    if (!this.child) {
      this.child = spawnUpstream(this.spec);
      // A spawn that fails (ENOENT, EMFILE) says so on the next tick: kept for start(), never an uncaught error.
      this.child.on("error", (err) => {
        this.spawnError ??= err;
      });
    }
    return this.child;
  }

  /**
   * Starts reading the child (spawning it first if need be). Idempotent: the era probe starts the transport, and
   * the channel that then takes it over starts it again.
   */
  start(): Promise<void> {
    this.started ??= this.begin();
    return this.started;
  }

  private async begin(): Promise<void> {
    const child = this.ensureSpawned();
    await new Promise<void>((resolve, reject) => {
      if (child.exitCode !== null || child.signalCode !== null) {
        reject(new Error(`exited (${child.exitCode ?? child.signalCode}) before it was spoken to`));
        return;
      }
      if (child.pid !== undefined) {
        resolve();
        return;
      }
      if (this.spawnError) {
        reject(this.spawnError);
        return;
      }
      child.once("spawn", () => resolve());
      child.once("error", reject);
    });
    child.on("error", (err) => this.onerror?.(err));
    child.once("close", () => this.finish());
    // The process we started is gone: the upstream is over, and whatever it started and left behind (a server
    // whose launcher died) goes too, at once (no stdin step: the leader was what we talked to).
    child.once("exit", () => {
      if (this.closing !== undefined || child.pid === undefined || !groupAlive(child.pid)) return;
      void endGroup(child, this.graceMs, false).then(() => this.finish());
    });
    child.stdin?.on("error", (err) => this.onerror?.(err));
    const who = `upstream ${this.options.name ?? this.spec.command}`;
    const lines = new LineReader(
      this.options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
      (line) => this.read(line),
      () => this.fail(new LineTooLongError(this.options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES, who)),
    );
    child.stdout?.on("data", (chunk: Buffer) => lines.push(chunk));
  }

  private get graceMs(): number {
    return this.options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  }

  private read(bytes: Buffer): void {
    const read = readMessageLine(bytes);
    if (!read) return;
    if ("problem" in read) {
      this.onerror?.(new Error(`upstream wrote a line that is ${read.problem}: ${read.line.slice(0, 200)}`));
      return;
    }
    const m = read.message as { id?: string | number; method?: unknown };
    if (m.id !== undefined && m.method === undefined) this.unanswered.delete(m.id);
    this.onmessage?.(read.message as JSONRPCMessage);
  }

  /**
   * The transport cannot go on (a line over the bound): every request still unanswered is answered with the
   * reason (so a caller learns why, not just "connection closed"), then the process group is ended.
   */
  private fail(err: Error): void {
    if (this.failure || this.closed) return;
    this.failure = err;
    this.onerror?.(err);
    const ids = [...this.unanswered];
    this.unanswered.clear();
    for (const id of ids) {
      this.onmessage?.({
        jsonrpc: "2.0",
        id,
        error: errors.connectionClosed(err.message).body,
      } as JSONRPCMessage);
    }
    void this.close();
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.closed || this.failure) {
      return Promise.reject(this.failure ?? new Error("not connected"));
    }
    const m = message as { id?: string | number; method?: unknown; params?: { requestId?: string | number } };
    if (m.id !== undefined && m.method !== undefined) this.unanswered.add(m.id);
    // A request we gave up on gets no answer: forgotten here, or the set would grow with every timeout.
    else if (m.method === "notifications/cancelled" && m.params?.requestId !== undefined) {
      this.unanswered.delete(m.params.requestId);
    }
    // Messages sent in one tick go out in one write: under load that is one pipe wake-up instead of many.
    if (!this.corked) {
      this.corked = true;
      stdin.cork();
      process.nextTick(() => {
        this.corked = false;
        stdin.uncork();
      });
    }
    let taken: boolean;
    try {
      taken = stdin.write(`${JSON.stringify(message)}\n`);
    } catch (err) {
      // A message that does not serialize fails its send, as a write that fails does: never a throw.
      if (m.id !== undefined && m.method !== undefined) this.unanswered.delete(m.id);
      return Promise.reject(err);
    }
    if (taken) return SENT;
    return new Promise((resolve, reject) => {
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

  /**
   * Ends stdin, then SIGTERM to the process group after the grace period (1 s), then SIGKILL to the group after
   * as long again: the SDK's sequence, applied to every process the upstream started, not only the first.
   */
  close(): Promise<void> {
    // A second close (the connection closing while the era probe's close runs) waits for the first.
    this.closing ??= this.end();
    return this.closing;
  }

  private async end(): Promise<void> {
    const child = this.child;
    if (!child) {
      this.finish();
      return;
    }
    await endGroup(child, this.graceMs);
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }
}
