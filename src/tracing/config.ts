/** @module Whether tracing is on, and where spans go: `tracing:` first, then the standard OTEL_* variables. */
import { SettingError } from "../config/setting-error.js";
import type { TracingConfig } from "./types.js";

export interface TracingPlan {
  /** The OTLP/HTTP traces URL (`…/v1/traces`). */
  readonly url: string;
  readonly serviceName: string;
  /** Of new traces (no sampled parent), the share recorded: 0 to 1. */
  readonly sampleRatio: number;
}

/**
 * Undefined (tracing off) unless `tracing.endpoint`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (a full URL) or
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL) is set; `OTEL_SDK_DISABLED=true` turns it off regardless.
 */
export function planTracing(
  config: TracingConfig | undefined,
  env: Readonly<Record<string, string | undefined>>,
): TracingPlan | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return undefined;
  let written: string | undefined;
  let where = "tracing.endpoint";
  if (config?.endpoint) written = config.endpoint;
  else if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) {
    written = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
    where = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";
  } else if (env.OTEL_EXPORTER_OTLP_ENDPOINT) {
    written = env.OTEL_EXPORTER_OTLP_ENDPOINT;
    where = "OTEL_EXPORTER_OTLP_ENDPOINT";
  }
  if (!written) return undefined;
  if (!/^https?:\/\/[^/]/.test(written) || !URL.canParse(written)) {
    throw new SettingError(where, `"${written}" is not an http(s) URL`, "e.g. http://otel-collector:4318");
  }
  // The traces variable is the full URL; a base endpoint gets the signal path.
  const url = where === "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" ? written : tracesUrl(written);
  const ratio = config?.sample_ratio ?? 1;
  if (!(ratio >= 0 && ratio <= 1)) {
    throw new SettingError(
      "tracing.sample_ratio",
      `${ratio} is not between 0 and 1`,
      "e.g. 0.1 for one in ten",
    );
  }
  return Object.freeze({
    url,
    serviceName: config?.service_name || env.OTEL_SERVICE_NAME || "toolpacks",
    sampleRatio: ratio,
  });
}

/** A base endpoint gets the signal path, as OTEL_EXPORTER_OTLP_ENDPOINT does in every SDK. */
function tracesUrl(base: string): string {
  const trimmed = base.replace(/\/+$/, "");
  return trimmed.endsWith("/v1/traces") ? trimmed : `${trimmed}/v1/traces`;
}
