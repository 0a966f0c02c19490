/** @module Which era an HTTP POST to the MCP endpoint speaks: 2025 (session, initialize) or 2026-07-28 (per-request `_meta`). */

import { errors, type WireError } from "../wire/errors.js";
import { checkEnvelope, type Envelope, hasClaim, isModernVersion, metaOf } from "./meta.js";
import { isRecord, META_KEYS, MODERN_VERSION } from "./wire.js";

const headerMismatch = errors.headerMismatch;
const unsupportedVersion = errors.unsupportedVersion;

/** Headers as node:http gives them (lower-case names). */
export type Headers = Readonly<Record<string, string | readonly string[] | undefined>>;

export type Classified =
  /** Serve it as today: the 2025 Streamable HTTP session path (initialize, Mcp-Session-Id, GET stream). */
  | {
      readonly era: "2025";
      readonly reason: "initialize" | "no-claim" | "batch" | "response" | "notification";
    }
  /** A 2026 request: its checked envelope, per request. Standard headers are checked next (headers.ts). */
  | { readonly era: "2026-07-28"; readonly kind: "request"; readonly envelope: Envelope }
  /** A 2026 notification: HTTP answers 202 (the core protocol defines none over HTTP). */
  | { readonly era: "2026-07-28"; readonly kind: "notification" }
  | { readonly era: "refused"; readonly refusal: WireError };

export interface ClassifyOptions {
  /** Modern versions served (default: 2026-07-28). */
  readonly modern?: readonly string[];
  /** 2025-era versions served through initialize; listed in `-32022` data so a client knows it may fall back. */
  readonly legacy?: readonly string[];
}

/** One header value, OWS-trimmed (RFC 9110 §5.5); a repeated header is refused by the caller via its comma form. */
export function header(headers: Headers, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  const s = Array.isArray(v) ? v.join(", ") : (v as string | undefined);
  return s === undefined ? undefined : s.replace(/^[ \t]+|[ \t]+$/g, "");
}

const isId = (id: unknown) => typeof id === "string" || (typeof id === "number" && Number.isInteger(id));
const invalidRequest = errors.invalidRequest;

/**
 * Classifies a parsed POST body the way the spec tells a dual-era server to (basic/versioning §Backward
 * compatibility; transports/streamable-http §Protocol version header): the BODY decides — a request whose
 * `params._meta` carries `io.modelcontextprotocol/protocolVersion` is a 2026 request, `initialize` and
 * claim-less requests are 2025. The `MCP-Protocol-Version` header only cross-checks: disagreeing with the
 * claim is `-32020`; naming a modern version on a claim-less request is `-32602` (the envelope is missing);
 * it never upgrades or downgrades the era on its own. GET and DELETE never reach this: they are 2025-only.
 */
export function classifyPost(headers: Headers, body: unknown, options: ClassifyOptions = {}): Classified {
  const modern = options.modern ?? [MODERN_VERSION];
  const advertised = [...modern, ...(options.legacy ?? [])];
  const versionHeader = header(headers, "mcp-protocol-version");
  const headerModern = versionHeader !== undefined && isModernVersion(versionHeader);

  if (Array.isArray(body)) {
    if (body.length === 0) return { era: "refused", refusal: invalidRequest("an empty batch") };
    if (body.some((m) => isRecord(m) && hasClaim(m.params))) {
      return { era: "refused", refusal: invalidRequest("a 2026-07-28 request cannot be part of a batch") };
    }
    return { era: "2025", reason: "batch" };
  }
  if (!isRecord(body) || body.jsonrpc !== "2.0")
    return { era: "refused", refusal: invalidRequest("not a JSON-RPC 2.0 message") };
  if (!("method" in body)) {
    if (("result" in body || "error" in body) && isId(body.id)) return { era: "2025", reason: "response" };
    return { era: "refused", refusal: invalidRequest("neither a request, a notification nor a response") };
  }
  if (typeof body.method !== "string" || body.method === "") {
    return { era: "refused", refusal: invalidRequest("method must be a non-empty string") };
  }
  if (body.params !== undefined && !isRecord(body.params)) {
    return { era: "refused", refusal: invalidRequest("params must be an object") };
  }
  const isRequest = "id" in body;
  if (isRequest && !isId(body.id))
    return { era: "refused", refusal: invalidRequest("id must be a string or an integer") };
  const claimed = hasClaim(body.params);

  if (!claimed) {
    if (!headerModern) {
      if (isRequest) return { era: "2025", reason: body.method === "initialize" ? "initialize" : "no-claim" };
      return { era: "2025", reason: "notification" };
    }
    if (!isRequest) return { era: "2026-07-28", kind: "notification" };
    if (body.method === "initialize") {
      return {
        era: "refused",
        refusal: headerMismatch(
          `initialize sent with MCP-Protocol-Version ${versionHeader}`,
          "MCP-Protocol-Version",
        ),
      };
    }
    const missing = metaOf(body.params) ? [META_KEYS.protocolVersion] : ["_meta"];
    const why = `Invalid params: MCP-Protocol-Version names ${versionHeader} but the request has no ${missing[0]}`;
    return { era: "refused", refusal: errors.badEnvelope(why, { missing }) };
  }

  const claim = metaOf(body.params)?.[META_KEYS.protocolVersion];
  if (!isRequest) {
    if (typeof claim !== "string")
      return {
        era: "refused",
        refusal: errors.badEnvelope("Invalid params: protocolVersion must be a string"),
      };
    if (versionHeader !== undefined && versionHeader !== claim) {
      return {
        era: "refused",
        refusal: headerMismatch(
          `MCP-Protocol-Version ${versionHeader} does not match _meta ${claim}`,
          "MCP-Protocol-Version",
        ),
      };
    }
    return { era: "2026-07-28", kind: "notification" };
  }
  // Shape first, then the header cross-check, then the version: the order the SDK's entry answers in.
  const shape = checkEnvelope(body.params);
  if (!shape.ok) return { era: "refused", refusal: shape.refusal };
  const version = shape.envelope.protocolVersion;
  if (versionHeader !== undefined && versionHeader !== version) {
    const why = `MCP-Protocol-Version ${versionHeader} does not match _meta ${version}`;
    return { era: "refused", refusal: headerMismatch(why, "MCP-Protocol-Version") };
  }
  if (!modern.includes(version)) return { era: "refused", refusal: unsupportedVersion(version, advertised) };
  return { era: "2026-07-28", kind: "request", envelope: shape.envelope };
}

/** What a 2026-only endpoint answers a 2025 POST: `-32022` naming what it serves (basic/versioning, last ¶). */
export function legacyRefused(body: unknown, modern: readonly string[] = [MODERN_VERSION]): WireError {
  const params = isRecord(body) ? body.params : undefined;
  const requested =
    isRecord(params) && typeof params.protocolVersion === "string" ? params.protocolVersion : "none";
  return unsupportedVersion(requested, modern);
}
