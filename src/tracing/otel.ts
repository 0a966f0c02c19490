/**
 * @module Tracing with OpenTelemetry: its own tracer provider (nothing registered globally), W3C trace context
 * and baggage carried in `params._meta`, spans exported over OTLP/HTTP (JSON). Loaded only when tracing is on.
 */
import {
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type TextMapSetter,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace-base";
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions";
import { laterAttributes, outcomeAttributes, requestAttributes, spanName } from "./attributes.js";
import type { TracingPlan } from "./config.js";
import type { McpSpan, McpSpanAttributes, SpanOutcome, Tracing } from "./types.js";

type Meta = Record<string, unknown>;

/** `_meta` as a carrier: only string values are trace context. */
const getter: TextMapGetter<Meta> = {
  keys: (meta) => Object.keys(meta),
  get: (meta, key) => {
    const v = meta[key];
    return typeof v === "string" ? v : undefined;
  },
};
const setter: TextMapSetter<Meta> = {
  set: (meta, key, value) => {
    meta[key] = value;
  },
};

class OtelSpan implements McpSpan {
  private ended = false;

  constructor(
    readonly span: Span,
    /** The context this span is current in (with the baggage it inherited). */
    readonly context: Context,
    private readonly propagator: CompositePropagator,
  ) {}

  get traceId(): string {
    return this.span.spanContext().traceId;
  }

  inject(meta: Meta): Meta {
    // The client's own context is replaced, not merged: the upstream's parent is this span.
    for (const key of this.propagator.fields()) delete meta[key];
    this.propagator.inject(this.context, meta, setter);
    return meta;
  }

  set(attrs: McpSpanAttributes): void {
    this.span.setAttributes(laterAttributes(attrs));
  }

  end(outcome?: SpanOutcome): void {
    if (this.ended) return;
    this.ended = true;
    const { attributes, error } = outcomeAttributes(outcome);
    this.span.setAttributes(attributes);
    if (error !== undefined) this.span.setStatus({ code: SpanStatusCode.ERROR, message: error });
    this.span.end();
  }
}

export class OtelTracing implements Tracing {
  readonly enabled = true;
  private readonly provider: BasicTracerProvider;
  private readonly tracer: Tracer;
  private readonly propagator = new CompositePropagator({
    propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
  });

  constructor(plan: TracingPlan, serviceVersion: string) {
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({
        [ATTR_SERVICE_NAME]: plan.serviceName,
        [ATTR_SERVICE_VERSION]: serviceVersion,
      }),
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(plan.sampleRatio) }),
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: plan.url }))],
    });
    this.tracer = this.provider.getTracer("toolpacks", serviceVersion);
  }

  serverSpan(
    method: string,
    target: string | undefined,
    attrs: McpSpanAttributes,
    parentMeta: unknown,
  ): McpSpan {
    const parent =
      parentMeta && typeof parentMeta === "object"
        ? this.propagator.extract(ROOT_CONTEXT, parentMeta as Meta, getter)
        : ROOT_CONTEXT;
    return this.start(SpanKind.SERVER, method, target, attrs, parent);
  }

  clientSpan(parent: McpSpan, method: string, target: string | undefined, attrs: McpSpanAttributes): McpSpan {
    return this.start(
      SpanKind.CLIENT,
      method,
      target,
      attrs,
      parent instanceof OtelSpan ? parent.context : ROOT_CONTEXT,
    );
  }

  flush(): Promise<void> {
    return this.provider.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.provider.shutdown();
  }

  private start(
    kind: SpanKind,
    method: string,
    target: string | undefined,
    attrs: McpSpanAttributes,
    parent: Context,
  ): OtelSpan {
    const span = this.tracer.startSpan(
      spanName(method, target),
      { kind, attributes: requestAttributes(method, target, attrs) },
      parent,
    );
    return new OtelSpan(span, trace.setSpan(parent, span), this.propagator);
  }
}
