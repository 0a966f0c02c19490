/** @module Tracing when it is off: constant objects, nothing allocated or imported per call. */
import type { McpSpan, Tracing } from "./types.js";

export const NOOP_SPAN: McpSpan = Object.freeze({
  traceId: "",
  inject: (meta: Record<string, unknown>) => meta,
  set: () => {},
  end: () => {},
});

export const NOOP_TRACING: Tracing = Object.freeze({
  enabled: false,
  serverSpan: () => NOOP_SPAN,
  clientSpan: () => NOOP_SPAN,
  flush: async () => {},
  shutdown: async () => {},
});
