/** @module Reading the JSON-RPC messages of a POST: content type, size limit, JSON, and the envelope rules. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { errors } from "../wire/errors.js";
import { readBody } from "./body.js";
import { sendError } from "./replies.js";

/** The messages of a POST (a batch or one), or undefined once the request has been answered with the error. */
export async function readMessages(
  req: IncomingMessage,
  res: ServerResponse,
  maxBodyBytes: number,
  maxBatch = Number.POSITIVE_INFINITY,
): Promise<{ messages: JSONRPCMessage[]; batch: boolean } | undefined> {
  const type = req.headers["content-type"] ?? "";
  let parsed: unknown = (req as { body?: unknown }).body;
  // A host app (express.json()) may have read and parsed the body already.
  if (parsed === undefined || typeof parsed !== "object" || !req.readableEnded) {
    if (!type.includes("application/json")) {
      sendError(res, errors.unsupportedMediaType());
      req.resume();
      return undefined;
    }
    const body = await readBody(req, maxBodyBytes);
    if (!body.ok) {
      // Read to its end, the connection can serve on; cut short, it cannot.
      sendError(res, errors.payloadTooLarge(maxBodyBytes, body.drained));
      return undefined;
    }
    try {
      parsed = JSON.parse(body.text);
    } catch (err) {
      sendError(res, errors.parse((err as Error).message));
      return undefined;
    }
  }
  const batch = Array.isArray(parsed);
  const messages = (batch ? parsed : [parsed]) as JSONRPCMessage[];
  if (messages.length === 0) {
    sendError(res, errors.emptyBatch());
    return undefined;
  }
  if (messages.length > maxBatch) {
    sendError(res, errors.batchTooLarge(maxBatch, messages.length));
    return undefined;
  }
  // What the SDK cannot parse it never answers: refuse it here, whole, with the reason.
  const seen = new Set<unknown>();
  for (const [i, m] of messages.entries()) {
    const problem = envelopeProblem(m);
    const id = problem === undefined ? (m as { id?: unknown }).id : undefined;
    const dup = problem === undefined && "method" in m && "id" in m && seen.has(id);
    seen.add(id);
    if (problem || dup) {
      const where = batch ? `message ${i}: ` : "";
      sendError(
        res,
        errors.invalidRequest(`${where}${problem ?? `request id ${JSON.stringify(id)} is used twice`}`),
      );
      return undefined;
    }
  }
  return { messages, batch };
}

const validId = (id: unknown) => typeof id === "string" || Number.isSafeInteger(id);

/** Why a message is not a JSON-RPC 2.0 request, notification or response MCP can carry; undefined if it is. */
function envelopeProblem(m: unknown): string | undefined {
  if (!m || typeof m !== "object" || Array.isArray(m)) return "a message must be a JSON object";
  const msg = m as Record<string, unknown>;
  if (msg.jsonrpc !== "2.0") return 'jsonrpc must be "2.0"';
  if ("method" in msg) {
    if (typeof msg.method !== "string" || !msg.method) return "method must be a non-empty string";
    if ("id" in msg && !validId(msg.id)) return "id must be a string or an integer";
    const params = msg.params;
    if (params === undefined) return undefined;
    if (!params || typeof params !== "object" || Array.isArray(params)) return "params must be an object";
    const meta = (params as { _meta?: unknown })._meta;
    if (meta === undefined) return undefined;
    if (!meta || typeof meta !== "object" || Array.isArray(meta)) return "params._meta must be an object";
    const token = (meta as { progressToken?: unknown }).progressToken;
    if (token !== undefined && !validId(token)) return "progressToken must be a string or an integer";
    return undefined;
  }
  if ("result" in msg || "error" in msg) {
    if (!validId(msg.id)) return "a response id must be a string or an integer";
    if ("error" in msg) {
      const e = msg.error as { code?: unknown; message?: unknown } | null;
      if (!e || typeof e !== "object" || !Number.isInteger(e.code) || typeof e.message !== "string") {
        return "error must have an integer code and a string message";
      }
    }
    return undefined;
  }
  return "neither a request, a notification nor a response";
}
