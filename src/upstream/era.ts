/**
 * @module Which MCP era an upstream speaks: pinned by its `protocol`, or found by a `server/discover` probe
 * (HTTP: a plain POST; stdio: the first message of the upstream's own process, probe-stdio.ts) and remembered per
 * URL and credentials, or per spawn spec, for the life of the process; forgotten when an instance of it fails or
 * refuses a 2026-07-28 request, so that its restart probes again.
 */
import { createHash } from "node:crypto";
import type { Upstream } from "../catalog/types.js";
import { MODERN_VERSION } from "../modern/wire.js";
import type { Variant } from "./instance.js";
import type { Discover, ProbeIdentity, ProbeVerdict } from "./probe.js";
import { spawnSpecOf } from "./spawn-spec.js";

export type Era = "2025" | typeof MODERN_VERSION;

export type EraVerdict =
  | { readonly era: "2025"; readonly why?: string }
  /** `discover`: what the probe found (absent when the era is pinned: the connection asks itself). */
  | { readonly era: typeof MODERN_VERSION; readonly discover?: Discover };

/** Verdicts found in this process, by upstream identity (see eraKey). Failures are never kept. */
export class EraCache {
  private readonly known = new Map<string, Promise<EraVerdict>>();

  /** The verdict kept for `key`, or the one `find` gives (concurrent callers share one probe). */
  get(key: string, find: () => Promise<EraVerdict>): Promise<EraVerdict> {
    const kept = this.known.get(key);
    if (kept) return kept;
    const found = find();
    this.known.set(key, found);
    found.catch(() => {
      if (this.known.get(key) === found) this.known.delete(key);
    });
    return found;
  }

  /** The next start of this upstream probes again. */
  forget(key: string): void {
    this.known.delete(key);
  }
}

/**
 * What a verdict is kept under: an HTTP upstream's URL and the headers it is sent (credentials can change what a
 * server answers); a stdio upstream's spawn spec as configured (the per-instance values `${instance.*}` left
 * unfilled: every instance of one command shares a verdict), with the instance's credentials. A digest only.
 */
export function eraKey(spec: Upstream, variant: Variant = {}): string {
  const what =
    spec.transport === "http"
      ? ["http", spec.url, Object.entries({ ...spec.headers, ...variant.headers }).sort()]
      : ["stdio", spawnSpecOf(spec, variant)];
  return createHash("sha256").update(JSON.stringify(what)).digest("hex");
}

export interface EraSearch {
  readonly eras: EraCache;
  readonly variant?: Variant;
  /** Toolpacks' own envelope (capabilities for this kind of instance, client info). */
  readonly who: ProbeIdentity;
  /** HTTP: the keep-alive dispatcher. */
  readonly dispatcher?: () => Promise<import("undici").Dispatcher>;
  /** Ends a probe in progress (the connection closed). */
  readonly signal?: AbortSignal;
  /** stdio: starts the instance's own process and probes it (see probe-stdio.ts); called only to probe. */
  readonly probeStdio: () => Promise<ProbeVerdict>;
  /** Says what the probe found (for the log). */
  readonly found?: (verdict: ProbeVerdict) => void;
}

/** The era to speak to `spec`; throws (with a one-line reason) when the probe says the upstream is unavailable. */
export async function findEra(spec: Upstream, search: EraSearch): Promise<EraVerdict> {
  if (spec.protocol === "2025") return { era: "2025", why: "pinned" };
  if (spec.protocol === MODERN_VERSION) return { era: MODERN_VERSION };
  // The probe carries no OAuth token, so an OAuth upstream would only answer it 401: it is spoken to in
  // 2025 unless its `protocol:` pins 2026-07-28 (SPEC §12.7).
  if (spec.oauth) return { era: "2025", why: "oauth" };
  const key = eraKey(spec, search.variant);
  const find = async (): Promise<EraVerdict> => {
    const verdict = await probe(spec, search);
    search.found?.(verdict);
    if (verdict.kind === "modern") return { era: MODERN_VERSION, discover: verdict.discover };
    if (verdict.kind === "legacy") return { era: "2025", why: verdict.why };
    if (verdict.kind === "error" && verdict.aborted) throw new ProbeAbortedError(verdict.message);
    throw new Error(verdict.kind === "error" ? verdict.message : "server/discover: no verdict");
  };
  try {
    return await search.eras.get(key, find);
  } catch (err) {
    // The probe this start waited for was another instance's, stopped because that instance closed: it says
    // nothing of the upstream (the failed verdict is already forgotten), so this start probes for itself.
    if (err instanceof ProbeAbortedError && !search.signal?.aborted) return search.eras.get(key, find);
    throw err;
  }
}

/** A probe stopped because the instance running it closed. */
class ProbeAbortedError extends Error {}

async function probe(spec: Upstream, search: EraSearch): Promise<ProbeVerdict> {
  const timeoutMs = spec.connectTimeoutMs;
  if (spec.transport === "http") {
    const [{ probeHttp }, dispatcher] = await Promise.all([import("./probe-http.js"), search.dispatcher?.()]);
    return probeHttp({
      url: new URL(spec.url!),
      headers: { ...spec.headers, ...search.variant?.headers },
      ...(dispatcher ? { dispatcher } : {}),
      who: search.who,
      timeoutMs,
      ...(search.signal ? { signal: search.signal } : {}),
    });
  }
  return search.probeStdio();
}
