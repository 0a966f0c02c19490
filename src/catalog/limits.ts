/** @module The `limits:` section: bounds on what clients can make the proxy hold, with their defaults (SPEC §7.6). */
import type { LoadedFile } from "../config/load.js";
import type { LimitsSpec } from "../config/types.js";

export interface Limits {
  /** Open sessions in total: past it the least recently used idle one is closed, else 503. */
  readonly sessions: number;
  /** Open sessions of one client (principal, else remote address): past it 503. */
  readonly sessionsPerClient: number;
  /** New per-credential or per-session instances one client may start per minute (token bucket). */
  readonly instancesPerMinute: number;
  /** Messages in one JSON-RPC batch. */
  readonly batch: number;
  /** Requests one session may have in flight. */
  readonly requestsPerSession: number;
  /** Unsent bytes on one response stream before its notifications are dropped. */
  readonly pendingOutputBytes: number;
  /** How long a response stream may hold unsent output while its reader takes none of it. */
  readonly stalledReaderMs: number;
  /** 2026-07-28 contexts kept at once: past it the least recently used idle one is closed, else 503. */
  readonly contexts: number;
  /** 2026-07-28 contexts of one client: past it its own least recently used idle one is closed, else 503. */
  readonly contextsPerClient: number;
  /** Open `subscriptions/listen` streams in total. */
  readonly listenStreams: number;
  /** Open `subscriptions/listen` streams of one client, across all its contexts. */
  readonly listenStreamsPerClient: number;
  /** Calls parked for a 2026-07-28 client's retry (input_required rounds), in total. */
  readonly parkedCalls: number;
  /** Calls parked for the retries of one client. */
  readonly parkedCallsPerClient: number;
  /** IPv6 clients are counted by this prefix of their address (a /64 is one subscriber's network). */
  readonly ipv6Prefix: number;
}

export const DEFAULT_LIMITS: Limits = Object.freeze({
  sessions: 10_000,
  sessionsPerClient: 1_000,
  instancesPerMinute: 60,
  batch: 100,
  requestsPerSession: 100,
  pendingOutputBytes: 1024 * 1024,
  stalledReaderMs: 30_000,
  contexts: 1024,
  contextsPerClient: 256,
  listenStreams: 1024,
  listenStreamsPerClient: 64,
  parkedCalls: 1024,
  parkedCallsPerClient: 64,
  ipv6Prefix: 64,
});

/** Each key as written → how it compiles. */
const KEYS: readonly [keyof LimitsSpec, keyof Limits, number][] = [
  ["sessions", "sessions", 1],
  ["sessions_per_client", "sessionsPerClient", 1],
  ["instances_per_minute", "instancesPerMinute", 1],
  ["batch", "batch", 1],
  ["requests_per_session", "requestsPerSession", 1],
  ["pending_output_bytes", "pendingOutputBytes", 1],
  ["stalled_reader_timeout", "stalledReaderMs", 1000],
  ["contexts", "contexts", 1],
  ["contexts_per_client", "contextsPerClient", 1],
  ["listen_streams", "listenStreams", 1],
  ["listen_streams_per_client", "listenStreamsPerClient", 1],
  ["parked_calls", "parkedCalls", 1],
  ["parked_calls_per_client", "parkedCallsPerClient", 1],
  ["ipv6_prefix", "ipv6Prefix", 1],
];

/** The limits the files set (each key: the first file that sets it), the rest at their defaults. */
export function limitsOf(files: readonly LoadedFile[]): Limits {
  const out: Record<string, number> = { ...DEFAULT_LIMITS };
  for (const [key, field, scale] of KEYS) {
    for (const f of files) {
      const v = f.config.limits?.[key];
      if (typeof v !== "number" || f.broken.within(["limits", key])) continue;
      out[field] = v * scale;
      break;
    }
  }
  return Object.freeze(out as unknown as Limits);
}

/** The catalog's limits with the `serve` options (or library options) that were given laid over them. */
export function withOverrides(limits: Limits, overrides: Partial<Limits> | undefined): Limits {
  if (!overrides) return limits;
  const given = Object.entries(overrides).filter(([, v]) => typeof v === "number" && Number.isFinite(v));
  return given.length ? Object.freeze({ ...limits, ...Object.fromEntries(given) }) : limits;
}
