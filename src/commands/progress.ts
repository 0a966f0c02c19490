/**
 * @module What `--live` prints while it waits for upstreams (10–20 s is common): a line per upstream as it
 * answers, on stderr, so stdout and `--json` stay exactly what scripts read. On a terminal a status line under
 * them names the upstreams still being waited for, rewritten in place and cleared at the end.
 */

export interface ProgressStream {
  readonly isTTY?: boolean;
  write(text: string): unknown;
}

export class LiveProgress {
  private readonly waiting: Set<string>;
  private done = 0;
  private status = false;

  constructor(
    private readonly names: readonly string[],
    private readonly out: ProgressStream = process.stderr,
  ) {
    this.waiting = new Set(names);
  }

  private get tty(): boolean {
    return this.out.isTTY === true;
  }

  /** Before the first connection: how many upstreams, so a wait has a reason. */
  start(): void {
    const n = this.names.length;
    if (!n) return;
    this.out.write(`connecting to ${n} upstream${n === 1 ? "" : "s"}…\n`);
    this.showStatus();
  }

  /** One upstream answered (its tools, or why it is unavailable). */
  answered(name: string, what: string): void {
    this.waiting.delete(name);
    this.done++;
    this.clearStatus();
    this.out.write(`  [${this.done}/${this.names.length}] ${name}: ${what}\n`);
    this.showStatus();
  }

  /** Every upstream answered: the status line goes, the result follows on its own. */
  end(): void {
    this.clearStatus();
  }

  private showStatus(): void {
    if (!this.tty || !this.waiting.size) return;
    this.out.write(`  listing tools of ${[...this.waiting].join(", ")}…`);
    this.status = true;
  }

  private clearStatus(): void {
    if (!this.status) return;
    this.out.write("\r\u001b[K");
    this.status = false;
  }
}
