/** @module Tracing's interface: a span per downstream request (SERVER) and per upstream request (CLIENT). */

/**
 * `tracing:` in packs.yaml (off unless this or `OTEL_EXPORTER_OTLP_ENDPOINT` is set):
 *
 * ```yaml
 * tracing:
 *   endpoint: http://otel-collector:4318   # OTLP/HTTP base URL; spans go to <endpoint>/v1/traces
 *   service_name: toolpacks                # default: OTEL_SERVICE_NAME, else "toolpacks"
 *   sample_ratio: 0.25                     # of new traces (default 1); a sampled parent is always followed
 * ```
 */
export interface TracingConfig {
  readonly endpoint?: string;
  readonly service_name?: string;
  readonly sample_ratio?: number;
}

/** What is known about one MCP request, for its span's attributes. Every field is optional. */
export interface McpSpanAttributes {
  /** The JSON-RPC id (`jsonrpc.request.id`); leave out for a notification. */
  readonly requestId?: string | number;
  /** `mcp.protocol.version`, as negotiated with that peer. */
  readonly protocolVersion?: string;
  /** `mcp.session.id`: a DIGEST of the session id (the one logs show), never the id. */
  readonly sessionDigest?: string;
  /** `network.transport`: `pipe` for stdio, `tcp` for http. */
  readonly transport?: "stdio" | "http";
  /** `gen_ai.tool.name`; for `tools/call` the target is used when this is left out. */
  readonly toolName?: string;
  /** `gen_ai.prompt.name`; for `prompts/get` the target is used when this is left out. */
  readonly promptName?: string;
  /** `mcp.resource.uri` (resources/read, subscribe, unsubscribe). */
  readonly resourceUri?: string;
  /** `server.address` / `server.port` of the upstream (CLIENT spans over HTTP). */
  readonly serverAddress?: string;
  readonly serverPort?: number;
  /** `toolpacks.toolset`: the toolset that exposed the tool, prompt or resource. */
  readonly toolset?: string;
  /** `toolpacks.upstream`: the upstream that serves it. */
  readonly upstream?: string;
}

/** How a request ended: with a result (an `isError` tool result counts as `tool_error`), or an error. */
export type SpanOutcome = { readonly result: unknown } | { readonly error: unknown };

export interface McpSpan {
  /** The trace id (32 hex), or "" when not tracing: for log lines. */
  readonly traceId: string;
  /**
   * Writes this span's context (`traceparent`, `tracestate`, `baggage`) into the `_meta` of the request
   * about to be sent, replacing the client's own; returns the same object. Call it on a CLIENT span.
   */
  inject(meta: Record<string, unknown>): Record<string, unknown>;
  /** Adds attributes learned after the span started (the upstream chosen, the negotiated version). */
  set(attrs: McpSpanAttributes): void;
  /** Ends the span once; later calls do nothing. */
  end(outcome?: SpanOutcome): void;
}

export interface Tracing {
  /** False when tracing is off: a caller may skip building attributes altogether. */
  readonly enabled: boolean;
  /**
   * A SERVER span for a request from a client, named `{method} {target}` (or `{method}`). Its parent is the
   * context in `parentMeta` (the request's `params._meta`: `traceparent`, `tracestate`, `baggage`), if any.
   * `target` is the tool or prompt name; leave it out for a resource URI (it would make names unbounded).
   */
  serverSpan(
    method: string,
    target: string | undefined,
    attrs: McpSpanAttributes,
    parentMeta: unknown,
  ): McpSpan;
  /** A CLIENT span for the request sent upstream on behalf of `parent` (whose trace and baggage it continues). */
  clientSpan(parent: McpSpan, method: string, target: string | undefined, attrs: McpSpanAttributes): McpSpan;
  /** Exports every ended span now. */
  flush(): Promise<void>;
  /** Flushes and stops exporting. */
  shutdown(): Promise<void>;
}
