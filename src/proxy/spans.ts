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

/** The SERVER span of a client request, under the caller's span when `params._meta` carries one. */
export function serverSpanOf(
  s: Pick<SessionState, "host" | "digest"> & { readonly protocolVersion?: string | undefined },
  method: string,
  params: Params,
  id: string | number,
  transport: "http" | "stdio",
): McpSpan {
  const tracing = s.host.tracing;
  if (!tracing.enabled) return NOOP_SPAN;
  const target = named(method) && typeof params.name === "string" ? params.name : undefined;
  const uri = uriOf(params);
  return tracing.serverSpan(
    method,
    target,
    {
      requestId: id,
      sessionDigest: s.digest,
      transport,
      ...(s.protocolVersion ? { protocolVersion: s.protocolVersion } : {}),
      ...(uri ? { resourceUri: uri } : {}),
    },
    params._meta,
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

/** `_meta` for the upstream request: the client's own, with this span's trace context instead of the client's. */
export function metaFor(span: McpSpan, meta: Meta | undefined): { _meta?: Meta } {
  if (span === NOOP_SPAN) return meta ? { _meta: meta } : {};
  return { _meta: span.inject({ ...meta }) };
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
