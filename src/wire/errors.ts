/**
 * @module The one error table: every JSON-RPC error toolpacks makes, by name, with its code, its message and,
 * where the answer is an HTTP refusal, its status and headers. Nothing else in the code writes an error code.
 * Errors the other side sent are not made here: they travel verbatim (`WireError` with their code and data).
 */

/** The codes (MCP's, the SDK's `ErrorCode`, and 2026-07-28's -32020…-32022). */
export const CODE = Object.freeze({
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** The SDK's ConnectionClosed; also the code of every HTTP refusal of toolpacks' own. */
  connectionClosed: -32000,
  /** The SDK's RequestTimeout; also "session not found". */
  requestTimeout: -32001,
  /** 2025: resource not found (2026-07-28 says -32602). */
  resourceNotFound: -32002,
  headerMismatch: -32020,
  missingRequiredClientCapability: -32021,
  unsupportedProtocolVersion: -32022,
  urlElicitationRequired: -32042,
} as const);

export interface ErrorBody {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

/**
 * An error to put on the wire: code, message, data exactly as the other side should read them (no "MCP error"
 * prefix, which the SDK's McpError adds once per hop). `status` and `headers`: how an HTTP edge answers it when
 * it refuses a request as a whole (absent: in-band, the era's rule decides the status).
 */
export class WireError extends Error {
  override readonly name = "WireError";
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
    readonly status?: number,
    readonly headers?: Readonly<Record<string, string>>,
  ) {
    super(message);
  }

  get body(): ErrorBody {
    return {
      code: this.code,
      message: this.message,
      ...(this.data !== undefined ? { data: this.data } : {}),
    };
  }
}

/** The code of any error-like value: its integer `code`, else -32603. */
export function codeOf(err: unknown): number {
  const code = (err as { code?: unknown } | null)?.code;
  return Number.isSafeInteger(code) ? (code as number) : CODE.internalError;
}

/** Any thrown value as the JSON-RPC error body the other side gets (an Error's own code and data, if it has them). */
export function errorBody(err: unknown): ErrorBody {
  if (err instanceof WireError) return err.body;
  const e = err as { message?: unknown; data?: unknown } | null;
  const message = typeof e?.message === "string" ? e.message : "Internal error";
  return { code: codeOf(err), message, ...(e?.data !== undefined ? { data: e.data } : {}) };
}

/** A refusal before any JSON-RPC exchange: `-32000` with an HTTP status (and headers: Retry-After, Allow …). */
function refusal(
  status: number,
  message: string,
  headers?: Record<string, string>,
  data?: unknown,
): WireError {
  return new WireError(CODE.connectionClosed, message, data, status, headers);
}

const retryAfter = (seconds: number) => ({ "retry-after": String(seconds) });

const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  503: "Service Unavailable",
};

export const errors = {
  // ── JSON-RPC and MCP, in band ─────────────────────────────────────────────────────────────────────────────
  parse: (why: string) => new WireError(CODE.parseError, `Parse error: ${why}`, undefined, 400),
  invalidRequest: (why: string) =>
    new WireError(CODE.invalidRequest, `Invalid Request: ${why}`, undefined, 400),
  methodNotFound: (method: string, why?: string) =>
    new WireError(CODE.methodNotFound, `Method not found: ${method}${why ? ` (${why})` : ""}`),
  invalidParams: (message: string, data?: unknown) => new WireError(CODE.invalidParams, message, data),
  internal: (message = "Internal error") => new WireError(CODE.internalError, message),
  /** A request we gave up on: its signal carried no reason. */
  cancelled: () => new WireError(CODE.requestTimeout, "cancelled"),
  timeout: (ms: number) => new WireError(CODE.requestTimeout, `timed out after ${ms} ms`, { timeout: ms }),
  connectionClosed: (message: string) => new WireError(CODE.connectionClosed, message),
  /** Who a local failure (a timeout, a closed connection) was waiting for: `upstream NAME` or `the client`. */
  waitingFor: (who: string, err: WireError) => new WireError(err.code, `${who}: ${err.message}`, err.data),

  // ── the HTTP request as a whole ──────────────────────────────────────────────────────────────────────────
  unsupportedMediaType: () => refusal(415, "Unsupported Media Type: Content-Type must be application/json"),
  payloadTooLarge: (limit: number, drained: boolean) =>
    refusal(
      413,
      `Payload Too Large: the limit is ${limit} bytes`,
      drained ? undefined : { connection: "close" },
    ),
  emptyBatch: () => errors.invalidRequest("an empty batch"),
  batchTooLarge: (max: number, size: number) =>
    errors.invalidRequest(`a batch may hold at most ${max} messages (limits.batch); this one holds ${size}`),
  initializeNotAlone: () => errors.invalidRequest("initialize must be sent alone"),
  methodNotAllowed: (allow: string) => refusal(405, "Method Not Allowed", { allow }),
  notAcceptable: () => refusal(406, "Not Acceptable: GET needs Accept: text/event-stream"),
  forbidden: (problem: string) => refusal(403, `Forbidden: ${problem}`),
  /** An authentication refused (RFC 6750): 400, 401 or 403 with its challenge, 503 with Retry-After. */
  authRefused: (status: number, description: string, headers: Record<string, string>) =>
    refusal(status, `${STATUS_TEXT[status] ?? "Refused"}: ${description}`, headers),
  serverError: () => new WireError(CODE.internalError, "Internal error", undefined, 500),
  unsupportedVersionHeader: (version: string) =>
    refusal(400, `Bad Request: unsupported protocol version ${version}`),
  badSelection: (why: string) => new WireError(CODE.invalidParams, `Bad selection: ${why}`, undefined, 400),
  /** The console's recheck of a toolset the config does not declare. */
  noToolset: (name: string) => refusal(404, `no toolset ${JSON.stringify(name)}`),
  /** A report that could not be made (an upstream's instance could not be read): try again shortly. */
  reportUnavailable: (why: string) => refusal(503, why, retryAfter(30)),

  // ── sessions ─────────────────────────────────────────────────────────────────────────────────────────────
  sessionIdRequired: () => refusal(400, "Bad Request: Mcp-Session-Id header is required"),
  sessionNotFound: () => new WireError(CODE.requestTimeout, "Session not found", undefined, 404),
  credentialsDiffer: () =>
    refusal(
      403,
      "Forbidden: this request's credential headers differ from those its session was opened with",
    ),
  anotherIdentity: () => refusal(403, "Forbidden: this session belongs to another identity"),
  requestIdInUse: (id: unknown) =>
    errors.invalidRequest(`request id ${JSON.stringify(id)} is still in use in this session`),
  streamOpen: () => refusal(409, "Conflict: a GET stream is already open for this session"),
  sessionClosed: () => new WireError(CODE.connectionClosed, "Session closed before the answer"),
  initializeParams: () =>
    errors.invalidParams(
      "Invalid initialize params: protocolVersion, capabilities and clientInfo are required",
    ),

  // ── limits (SPEC §7.6): every one names its key ──────────────────────────────────────────────────────────
  sessionsPerClient: (held: number, max: number) =>
    refusal(
      503,
      `Service Unavailable: this client already has ${held} open sessions, the most one client may hold (limits.sessions_per_client: ${max}); end sessions it no longer uses (DELETE) or wait for them to expire`,
      retryAfter(30),
    ),
  sessions: (max: number) =>
    refusal(
      503,
      `Service Unavailable: the server holds its most sessions (limits.sessions: ${max}) and none is idle; retry later`,
      retryAfter(30),
    ),
  inFlight: (busy: number, max: number, whose: "session" | "context") =>
    refusal(
      429,
      whose === "session"
        ? `Too Many Requests: this session has ${busy} requests in flight and may have at most ${max} (limits.requests_per_session); wait for their answers`
        : `Too Many Requests: ${busy} requests with this selection and these credentials are in flight and at most ${max} may be (limits.requests_per_session); wait for their answers`,
      retryAfter(1),
    ),
  maxInstances: (upstream: string, running: number, max: number, why: "busy" | "shares" = "busy") =>
    refusal(
      503,
      `Service Unavailable: upstream ${upstream} already runs ${running} isolated instances (max_instances: ${max}) and ${why === "busy" ? "every one has a request in flight" : "none may be taken (each is in use, or its client holds no more than its fair share)"}`,
      retryAfter(30),
    ),
  contexts: (max: number, perClient: boolean) =>
    refusal(
      503,
      perClient
        ? `Service Unavailable: this client holds its most 2026-07-28 contexts (limits.contexts_per_client: ${max}, one per selection and credentials) and every one has a request in flight, a listen stream or a parked call; retry later`
        : `Service Unavailable: the server holds its most 2026-07-28 contexts (limits.contexts: ${max}) and none may be closed for this client; retry later`,
      retryAfter(30),
    ),
  instancesPerMinute: (rate: number, seconds: number) =>
    refusal(
      429,
      `Too Many Requests: this client started its most new upstream instances for now (limits.instances_per_minute: ${rate}); retry in ${seconds} s`,
      retryAfter(seconds),
    ),
  /** One client's calls open on one instance of an HTTP upstream (SPEC §7.6): they hold its connections. */
  upstreamCallsPerClient: (upstream: string, max: number, connections: number) =>
    new WireError(
      CODE.connectionClosed,
      `upstream ${upstream}: this client already has ${max} calls open on it, the most one client may (a quarter of the instance's max_connections: ${connections}), a call waiting for its input included; wait for one to end`,
      { limit: "upstream_calls_per_client", max },
    ),
  subscriptions: (max: number) =>
    new WireError(CODE.connectionClosed, `a session may hold at most ${max} resource subscriptions`),
  /** Listen streams of one session or context (in band), of one client, or in total (refused at the door: 503). */
  listenStreams: (max: number, whose: "session" | "client" | "total" = "session") =>
    whose === "session"
      ? errors.internal(`Subscription limit reached (at most ${max} listen streams at once)`)
      : new WireError(
          CODE.internalError,
          whose === "client"
            ? `Subscription limit reached: this client has ${max} listen streams open, the most one client may across its contexts (limits.listen_streams_per_client: ${max}); close one first`
            : `Subscription limit reached: the server holds its most listen streams (limits.listen_streams: ${max}); retry later`,
          { limit: whose === "client" ? "listen_streams_per_client" : "listen_streams", max },
          503,
          retryAfter(30),
        ),
  /** The process is near its open-file limit: nothing new that would hold descriptors is taken. */
  fdHeadroom: (open: number, limit: number) =>
    refusal(
      503,
      `Service Unavailable: the server is near its limit of open files (${open} of ${limit} open); new sessions, contexts and listen streams are refused until some close; retry later`,
      retryAfter(5),
      { limit: "fd_headroom" },
    ),
  clientWaiting: (max: number, method: string) =>
    errors.internal(
      `the client already has ${max} requests of this session waiting for its answer; ${method} is refused`,
    ),
  parkedCalls: (max: number, perClient: boolean) =>
    new WireError(
      CODE.internalError,
      perClient
        ? `too many calls of this client are waiting for input (at most ${max}, limits.parked_calls_per_client): answer or drop one first`
        : `too many calls are waiting for input (at most ${max}, limits.parked_calls)`,
      { limit: perClient ? "parked_calls_per_client" : "parked_calls", max },
    ),
  /** A parked call's request to the client, failed: the call ended, the upstream cancelled it, or the bridge ended. */
  callEnded: () => errors.internal("the call ended before the client answered"),
  cancelledByUpstream: () => errors.internal("cancelled by the upstream"),
  /** What an upstream asks through a listen stream's subscription: a listen stream has nobody to ask. */
  listenNotAsked: (id: string) => errors.internal(`a listen stream (${id}) is not asked anything`),
  bridgeEnded: (reason: string) => errors.internal(reason),

  // ── calls ────────────────────────────────────────────────────────────────────────────────────────────────
  noToolName: () => errors.invalidParams("tools/call needs a tool name"),
  unknown: (kind: string, name: unknown) => errors.invalidParams(`Unknown ${kind}: ${String(name)}`),
  resourceNotFound: (uri: unknown) =>
    new WireError(CODE.resourceNotFound, `Resource not found: ${String(uri)}`, { uri }),
  /** A 2026-07-28 upstream's "not found" (-32602) for a 2025 client, which expects -32002: same message and data. */
  as2025ResourceNotFound: (err: { message: string; data?: unknown }) =>
    new WireError(CODE.resourceNotFound, err.message, err.data),
  unknownRefType: (type: unknown) =>
    errors.invalidParams(`completion/complete: unknown ref type ${String(type)}`),
  badLogLevel: (levels: readonly string[]) =>
    errors.invalidParams(`logging/setLevel: level must be one of ${levels.join(", ")}`),
  invalidArguments: (tool: string, why: string, data?: unknown) =>
    errors.invalidParams(`Invalid arguments for tool ${tool}: ${why}`, data),

  // ── the client, asked something (sampling, elicitation, roots) ───────────────────────────────────────────
  clientLacks: (method: string, needs: string, whose: "session" | "request") =>
    new WireError(
      CODE.methodNotFound,
      whose === "session"
        ? `the client of this session does not support ${method} (no ${needs} capability)`
        : `the client does not support ${method} (no ${needs} capability)`,
    ),
  clientDidNotAnswer: (method: string, reason: string) =>
    new WireError(CODE.requestTimeout, `the client did not answer ${method}: ${reason}`),
  notAskable: () => errors.internal("a 2026-07-28 request is not sent server→client requests"),
  untied: (method: string, why: string) =>
    errors.internal(
      `toolpacks cannot tell which client ${method} is for: ${why} (declare the upstream with isolation: per-session)`,
    ),

  // ── 2026-07-28 (SPEC §12) ────────────────────────────────────────────────────────────────────────────────
  notInModern: (method: string, version: string) =>
    errors.methodNotFound(method, `not part of MCP ${version}`),
  noTasks: (method: string) =>
    errors.methodNotFound(method, "this server does not offer the io.modelcontextprotocol/tasks extension"),
  requestState: () =>
    errors.invalidParams("Invalid or expired requestState", { reason: "invalid_request_state" }),
  needsCapability: (needs: string, required: Readonly<Record<string, object>>) =>
    new WireError(
      CODE.missingRequiredClientCapability,
      `this call needs the client's ${needs} capability, which this request did not declare`,
      { requiredCapabilities: required },
    ),
  tooManyRounds: (upstream: string, max: number) =>
    errors.internal(`upstream ${upstream} asked for input ${max} times in one call`),
  /** A 2026-07-28 request whose `_meta` envelope is missing or malformed (HTTP 400). */
  badEnvelope: (message: string, data?: unknown) => new WireError(CODE.invalidParams, message, data, 400),
  headerMismatch: (message: string, header: string) =>
    new WireError(CODE.headerMismatch, `Header mismatch: ${message}`, { header }, 400),
  missingCapability: (required: Readonly<Record<string, object>>, why: string) =>
    new WireError(CODE.missingRequiredClientCapability, why, { requiredCapabilities: { ...required } }, 400),
  unsupportedVersion: (requested: string, supported: readonly string[]) =>
    new WireError(
      CODE.unsupportedProtocolVersion,
      `Unsupported protocol version: ${requested}`,
      { supported: [...supported], requested },
      400,
    ),
} as const;

/**
 * The HTTP status of an error answer that is not streamed (2026-07-28 streamable-http §Status codes): method not
 * found is 404, the era's own refusals 400, everything else in band (200).
 */
export function modernStatusOf(code: number): number {
  if (code === CODE.methodNotFound) return 404;
  if (
    code === CODE.headerMismatch ||
    code === CODE.missingRequiredClientCapability ||
    code === CODE.unsupportedProtocolVersion
  )
    return 400;
  return 200;
}
