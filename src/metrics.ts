/** @module Prometheus metrics (prom-client), one registry per gateway so an embedding app can keep its own. */
import { Counter, Gauge, Histogram, Registry } from "prom-client";

export type Outcome = "ok" | "tool_error" | "error" | "timeout" | "cancelled";

export class Metrics {
  readonly registry = new Registry();
  readonly calls = new Counter({
    name: "toolpacks_calls_total",
    help: "Forwarded tool calls by toolset, tool, upstream and outcome (ok, tool_error, error, timeout, cancelled).",
    labelNames: ["toolset", "tool", "upstream", "outcome"] as const,
    registers: [this.registry],
  });
  readonly latency = new Histogram({
    name: "toolpacks_call_duration_seconds",
    help: "Time from a tool call arriving to its answer, by upstream and tool.",
    labelNames: ["upstream", "tool"] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  readonly sessions = new Gauge({
    name: "toolpacks_sessions",
    help: "Open sessions by selection (the canonical list of requested toolsets).",
    labelNames: ["selection"] as const,
    registers: [this.registry],
  });
  readonly upstreamUp = new Gauge({
    name: "toolpacks_upstream_up",
    help: "1 when an upstream instance is ready, 0 when it is down.",
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
    help: "Requested toolsets not enabled, by toolset and reason (missing, upstream-unavailable, conflict).",
    labelNames: ["toolset", "reason"] as const,
    registers: [this.registry],
  });

  private readonly callChildren = new Map<
    string,
    { count: { inc(): void }; time: { observe(v: number): void } }
  >();

  /** One call's figures. Label sets are bound once and cached: prom-client hashes labels on every inc otherwise. */
  recordCall(toolset: string, tool: string, upstream: string, outcome: Outcome, seconds: number): void {
    const key = `${toolset}\u0000${tool}\u0000${upstream}\u0000${outcome}`;
    let child = this.callChildren.get(key);
    if (!child) {
      child = {
        count: this.calls.labels({ toolset, tool, upstream, outcome }),
        time: this.latency.labels({ upstream, tool }),
      };
      this.callChildren.set(key, child);
    }
    child.count.inc();
    child.time.observe(seconds);
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
