/** @module Prometheus metrics (prom-client), one registry per gateway so an embedding app can keep its own. */
import { createRequire } from "node:module";
import type * as Prom from "prom-client";
import { getOrCreate } from "./maps.js";
import { type CountSeries, type HistogramSeries, KeptCounter, KeptHistogram } from "./metrics-series.js";

/**
 * The three classes used, from their own files: prom-client's index also loads its default process metrics and
 * @opentelemetry/api (81 files, ~100 ms of CPU at start); these are 8. They are the same classes the index exports.
 */
const require = createRequire(import.meta.url);
const Counter = require("prom-client/lib/counter") as typeof Prom.Counter;
const Gauge = require("prom-client/lib/gauge") as typeof Prom.Gauge;
const Registry = require("prom-client/lib/registry") as typeof Prom.Registry;

/** Selections with a `toolpacks_sessions` series of their own; the rest are reported as "other". */
const MAX_SELECTION_SERIES = 50;

/** Subjects with a `toolpacks_subject_calls_total` series of their own; later ones count as "other". */
const MAX_SUBJECT_SERIES = 100;

export type Outcome = "ok" | "tool_error" | "error" | "timeout" | "cancelled";

export class Metrics {
  readonly registry = new Registry();
  /** Counted per call: kept by us, formatted by prom-client (metrics-series.ts). */
  readonly calls = new KeptCounter(
    "toolpacks_calls_total",
    "Forwarded tool calls by toolset, tool, upstream and outcome (ok, tool_error, error, timeout, cancelled).",
    this.registry,
  );
  readonly latency = new KeptHistogram(
    "toolpacks_call_duration_seconds",
    "Time from a tool call arriving to its answer, by upstream and tool.",
    this.registry,
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  );
  readonly sessions = new Gauge({
    name: "toolpacks_sessions",
    help: `Open sessions by selection (the canonical list of requested toolsets); past ${MAX_SELECTION_SERIES} selections, the rest count as "other".`,
    labelNames: ["selection"] as const,
    registers: [this.registry],
  });
  readonly upstreamUp = new Gauge({
    name: "toolpacks_upstream_up",
    help: "Ready instances of an upstream, by kind of instance (instance: shared, credential, session); 0 when none is.",
    labelNames: ["upstream", "instance"] as const,
    registers: [this.registry],
  });
  readonly restarts = new Counter({
    name: "toolpacks_upstream_restarts_total",
    help: "Upstream starts after a failure.",
    labelNames: ["upstream"] as const,
    registers: [this.registry],
  });
  readonly refreshes = new Counter({
    name: "toolpacks_inventory_refreshes_total",
    help: "Times an upstream's lists were read (start, list_changed, enable gate).",
    labelNames: ["upstream"] as const,
    registers: [this.registry],
  });
  readonly refusals = new Counter({
    name: "toolpacks_gate_refusals_total",
    help: "Requested toolsets not enabled, by toolset and reason (missing, upstream-unavailable, conflict, forbidden).",
    labelNames: ["toolset", "reason"] as const,
    registers: [this.registry],
  });

  readonly subjectCalls = new KeptCounter(
    "toolpacks_subject_calls_total",
    `Tool calls by caller (the principal's subject, or its digest with audit.subject: digest) and outcome; the first ${MAX_SUBJECT_SERIES} subjects seen get a series of their own, the rest count as "other".`,
    this.registry,
  );

  readonly untied = new Counter({
    name: "toolpacks_untied_messages_total",
    help: "Log lines (kind log), requests (kind request) and other notifications a shared or per-credential upstream instance sent tied to no call: not delivered to any client.",
    labelNames: ["upstream", "kind"] as const,
    registers: [this.registry],
  });

  readonly limited = new Counter({
    name: "toolpacks_limit_hits_total",
    help: "Times a client reached a limit (SPEC 7.6), by limit: a refusal, a session closed to make room, an idle instance taken over, notifications dropped for a slow reader, a stalled reader's connection closed, a find_tools index dropped to make room.",
    labelNames: ["limit"] as const,
    registers: [this.registry],
  });

  /** Open sessions per selection, and the selections that have a series of their own. */
  private readonly open = new Map<string, number>();
  private readonly labelled = new Set<string>();
  /** Ready instances: upstream → kind → instance ids. */
  private readonly ready = new Map<string, Map<string, Set<string>>>();

  /** A selection keeps the label its first open session got until its last one closes. */
  private selectionLabel(selection: string): string {
    if (this.labelled.has(selection)) return selection;
    if (!this.open.has(selection) && this.labelled.size < MAX_SELECTION_SERIES) {
      this.labelled.add(selection);
      return selection;
    }
    return "other";
  }

  sessionOpened(selection: string): void {
    const label = this.selectionLabel(selection);
    this.open.set(selection, (this.open.get(selection) ?? 0) + 1);
    this.sessions.inc({ selection: label });
  }

  sessionClosed(selection: string): void {
    const n = (this.open.get(selection) ?? 1) - 1;
    const label = this.labelled.has(selection) ? selection : "other";
    this.sessions.dec({ selection: label });
    if (n > 0) {
      this.open.set(selection, n);
      return;
    }
    this.open.delete(selection);
    if (label !== "other") {
      this.labelled.delete(selection);
      this.sessions.remove({ selection });
    }
  }

  instanceState(upstream: string, kind: string, id: string, up: boolean): void {
    const byKind = getOrCreate(this.ready, upstream, () => new Map<string, Set<string>>());
    const ids = getOrCreate(byKind, kind, () => new Set<string>());
    if (up) ids.add(id);
    else ids.delete(id);
    this.upstreamUp.set({ upstream, instance: kind }, ids.size);
  }

  instanceGone(upstream: string, kind: string, id: string): void {
    const ids = this.ready.get(upstream)?.get(kind);
    if (!ids) return;
    ids.delete(id);
    if (ids.size === 0 && kind !== "shared") this.upstreamUp.remove({ upstream, instance: kind });
    else this.upstreamUp.set({ upstream, instance: kind }, ids.size);
  }

  /** Subjects with a series of their own (never forgotten: a subject has no end, unlike a session). */
  private readonly subjects = new Set<string>();

  /**
   * The series of a route (`key`: the resolution's route object, which names one toolset, tool and upstream) by
   * outcome: found by identity, without building and hashing a string key per call.
   */
  private readonly byRoute = new WeakMap<
    object,
    { toolset: string; series: Partial<Record<Outcome, { count: CountSeries; time: HistogramSeries }>> }
  >();

  /** One call's figures; `key` (a route object) lets its series be found again by identity. */
  recordCall(
    toolset: string,
    tool: string,
    upstream: string,
    outcome: Outcome,
    seconds: number,
    subject?: string,
    key?: object,
  ): void {
    if (subject !== undefined) {
      if (!this.subjects.has(subject) && this.subjects.size < MAX_SUBJECT_SERIES) this.subjects.add(subject);
      const label = this.subjects.has(subject) ? subject : "other";
      this.subjectCalls.inc(
        this.subjectCalls.series(`${label}\u0000${outcome}`, { subject: label, outcome }),
      );
    }
    let routed = key ? this.byRoute.get(key) : undefined;
    if (key && routed?.toolset !== toolset) {
      routed = { toolset, series: {} };
      this.byRoute.set(key, routed);
    }
    let bound = routed?.series[outcome];
    if (!bound) {
      // The series themselves are found by their labels (the same set for every route that names them).
      bound = {
        count: this.calls.series(`${toolset}\u0000${tool}\u0000${upstream}\u0000${outcome}`, {
          toolset,
          tool,
          upstream,
          outcome,
        }),
        time: this.latency.series(`${upstream}\u0000${tool}`, { upstream, tool }),
      };
      if (routed) routed.series[outcome] = bound;
    }
    this.calls.inc(bound.count);
    this.latency.observe(bound.time, seconds);
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
