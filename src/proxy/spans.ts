/**
 * @module The spans of one request: SERVER for what a client asked, CLIENT for what is sent upstream on its
 * behalf, the trace context continued from the client's `_meta` and written into the upstream's. When tracing
 * is off each function returns the shared no-op span before building anything.
 */
import type { Route } from "../resolve.js";
import { NOOP_SPAN } from "../tracing/noop.js";
import type { McpSpan } from "../tracing/types.js";
import type { Params } from "./host.js";
import type { SessionState } from "./state.js";

type Meta = Record<string, unknown>;

const named = (method: string) => method === "tools/call" || method === "prompts/get";
const uriOf = (params: Params) => (typeof params.uri === "string" ? params.uri : undefined);

/** The headers of an HTTP request, as far as tracing reads them. */
export type TraceHeaders = Readonly<Record<string, string | string[] | undefined>>;

const TRACE_FIELDS = ["traceparent", "tracestate", "baggage"] as const;

/**
 * Where the caller's trace context is: `params._meta` when it has a `traceparent` (the MCP way, either era),
 * else the W3C headers of the HTTP request (`traceparent`, `tracestate`, `baggage`).
 */
function traceCarrier(meta: unknown, headers: TraceHeaders | undefined): unknown {
  if (typeof (meta as Meta | undefined)?.traceparent === "string" || !headers) return meta;
  if (typeof headers.traceparent !== "string") return meta;
  const out: Meta = {};
  for (const f of TRACE_FIELDS) if (typeof headers[f] === "string") out[f] = headers[f];
  return out;
}

/**
 * The SERVER span of a client request, under the caller's span when `params._meta` or a header carries one.
 * `headers` are those of the HTTP request (none over stdio or in memory).
 */
export function serverSpanOf(
  s: Pick<SessionState, "host" | "digest">,
  request: { readonly id: string | number; readonly method: string; readonly params?: Params },
  protocolVersion: string | undefined,
  headers: TraceHeaders | undefined,
): McpSpan {
  const tracing = s.host.tracing;
  if (!tracing.enabled) return NOOP_SPAN;
  const { id, method } = request;
  const params = request.params ?? {};
  const target = named(method) && typeof params.name === "string" ? params.name : undefined;
  const uri = uriOf(params);
  return tracing.serverSpan(
    method,
    target,
    {
      requestId: id,
      sessionDigest: s.digest,
      transport: headers ? "http" : "stdio",
      ...(protocolVersion ? { protocolVersion } : {}),
      ...(uri ? { resourceUri: uri } : {}),
    },
    traceCarrier(params._meta, headers),
  );
}

/** The CLIENT span of a request relayed to `route`'s upstream; the SERVER span learns the toolset and upstream. */
export function clientSpanOf(
  s: SessionState,
  parent: McpSpan,
  route: Route,
  method: string,
  params: Params,
): McpSpan {
  const tracing = s.host.tracing;
  if (!tracing.enabled) return NOOP_SPAN;
  const toolset = route.toolsets[0];
  const where = { upstream: route.upstream, ...(toolset ? { toolset } : {}) };
  parent.set(where);
  const spec = s.host.upstream(route.upstream);
  const url = spec?.transport === "http" && spec.url && URL.canParse(spec.url) ? new URL(spec.url) : null;
  const port = url ? Number(url.port || (url.protocol === "https:" ? 443 : 80)) : undefined;
  const uri = uriOf(params);
  return tracing.clientSpan(parent, method, named(method) ? route.original : undefined, {
    ...where,
    transport: spec?.transport === "http" ? "http" : "stdio",
    ...(url ? { serverAddress: url.hostname, serverPort: port } : {}),
    ...(uri ? { resourceUri: uri } : {}),
  });
}

/** The upstream request: its `_meta` with this span's trace context instead of the client's. */
export function withTrace(span: McpSpan, body: Params): Params {
  if (span === NOOP_SPAN) return body;
  return { ...body, _meta: span.inject({ ...(body._meta as Meta | undefined) }) };
}

/** Ends `span` with how `p` settles; `p` itself when not tracing. */
export function traced<T>(span: McpSpan, p: Promise<T>): Promise<T> {
  if (span === NOOP_SPAN) return p;
  return p.then(
    (result) => {
      span.end({ result });
      return result;
    },
    (error: unknown) => {
      span.end({ error });
      throw error;
    },
  );
}
