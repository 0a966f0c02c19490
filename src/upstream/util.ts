/** @module Small helpers of the upstream layer: state comparison, timeouts, redacted errors, process exit. */
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

/**
 * The error with its text redacted (its message and every string in its data): an upstream may quote a configured
 * secret or a credential back. Changed in place, so its class (what callers tell errors apart by) is kept.
 */
export function redactError(err: unknown, redact: ((text: string) => string) | undefined): unknown {
  if (!redact || !err || typeof err !== "object") return err;
  const e = err as { message?: unknown; data?: unknown };
  try {
    if (typeof e.message === "string") {
      const message = redact(e.message);
      if (message !== e.message) e.message = message;
    }
    if (e.data !== undefined) {
      const data = redactValue(e.data, redact, 0);
      if (data !== e.data) e.data = data;
    }
  } catch {}
  return err;
}

/** A copy with every string redacted (the same value when nothing changed); deeper than 32 levels: dropped. */
function redactValue(value: unknown, redact: (text: string) => string, depth: number): unknown {
  if (typeof value === "string") return redact(value);
  if (!value || typeof value !== "object") return value;
  if (depth > 32) return null;
  let changed = false;
  const copy = (v: unknown) => {
    const out = redactValue(v, redact, depth + 1);
    if (out !== v) changed = true;
    return out;
  };
  if (Array.isArray(value)) {
    const out = value.map(copy);
    return changed ? out : value;
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const key = redact(k);
    if (key !== k) changed = true;
    out[key] = copy(v);
  }
  return changed ? out : value;
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
