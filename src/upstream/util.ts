/** @module Small helpers of the upstream layer: state comparison, timeouts, process exit. */
import type { UpstreamState } from "../catalog/inventory.js";

export function sameState(a: UpstreamState | undefined, b: UpstreamState): boolean {
  if (!a || a.status !== b.status) return false;
  if (a.status === "unavailable" || b.status === "unavailable") return a === b;
  return (
    JSON.stringify([a.tools, a.prompts, a.resources, a.templates]) ===
    JSON.stringify([b.tools, b.prompts, b.resources, b.templates])
  );
}

export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

export function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export async function waitForExit(pid: number, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  try {
    process.kill(pid, "SIGKILL");
  } catch {}
}
