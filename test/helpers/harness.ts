/** A proxy per test: each test serves its own config through the real CLI; what it starts is stopped after it. */
import { afterAll, afterEach } from "vitest";
import { closeAgents } from "./from.js";
import { type Served, serve, tempDir } from "./proc.js";

export interface PerTest {
  readonly tmp: ReturnType<typeof tempDir>;
  /** Run (and emptied) after each test, failures ignored. */
  readonly cleanups: (() => Promise<unknown>)[];
  /** Serves `yaml` with `args`, killed after the test. */
  start(yaml: string, args?: string[]): Promise<Served>;
}

/** Registers the hooks (call it at the top of a test file). */
export function perTest(): PerTest {
  const tmp = tempDir();
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    await Promise.all(cleanups.splice(0).map((f) => f().catch(() => {})));
  });
  afterAll(async () => {
    await closeAgents();
    tmp.cleanup();
  });
  async function start(yaml: string, args: string[] = []): Promise<Served> {
    const file = tmp.file(`packs-${Math.random().toString(36).slice(2)}.yaml`, yaml);
    const served = await serve([...args, file]);
    cleanups.push(() => served.stop("SIGKILL"));
    return served;
  }
  return { tmp, cleanups, start };
}
