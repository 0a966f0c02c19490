/** @module Tracing on or off. Off, nothing of OpenTelemetry is loaded, and every span is a shared no-op. */
import { planTracing, type TracingPlan } from "./config.js";
import { NOOP_TRACING } from "./noop.js";
import type { Tracing, TracingConfig } from "./types.js";

export interface CreateTracingOptions {
  /** Where OTEL_* variables are read (default: process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** `service.version` of the spans' resource. */
  readonly serviceVersion?: string;
}

/**
 * The no-op tracing unless `config.endpoint` or an OTLP endpoint variable is set; then an OpenTelemetry
 * tracer exporting over OTLP/HTTP, imported only now. Throws `SettingError` for a malformed setting.
 */
export async function createTracing(
  config: TracingConfig | undefined,
  options: CreateTracingOptions = {},
): Promise<Tracing> {
  const plan = planTracing(config, options.env ?? process.env);
  if (!plan) return NOOP_TRACING;
  const { OtelTracing } = await import("./otel.js");
  return new OtelTracing(plan, options.serviceVersion ?? "0.0.0");
}

/** The tracing of a compiled plan (`catalog.tracing`): the no-op tracing when there is none. */
export async function tracingFor(plan: TracingPlan | undefined, serviceVersion: string): Promise<Tracing> {
  if (!plan) return NOOP_TRACING;
  const { OtelTracing } = await import("./otel.js");
  return new OtelTracing(plan, serviceVersion);
}
