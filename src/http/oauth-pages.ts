/**
 * @module The OAuth pages on the HTTP server (`/oauth/UPSTREAM/start`, `/oauth/callback`,
 * `/oauth/client-metadata.json`): behind the Host/Origin check, open without a bearer token (a browser has
 * none); the start page acts for the request's principal, or for the one its ticket names.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { identityKey } from "../auth/requirements.js";
import type { Principal } from "../auth/types.js";
import type { FlowRequest, FlowResponse } from "../oauth/routes.js";
import { sendJson } from "./replies.js";

export type OAuthPages = (req: FlowRequest) => Promise<FlowResponse | undefined>;

export async function serveOAuth(
  req: IncomingMessage,
  res: ServerResponse,
  url: string,
  pages: OAuthPages,
  who: Principal | undefined,
  problem: string | undefined,
): Promise<void> {
  req.resume();
  if (problem) return sendJson(res, 403, { error: `Forbidden: ${problem}` });
  const principal = who && identityKey(who);
  const cookie = req.headers.cookie;
  const r = await pages({
    method: req.method ?? "GET",
    url,
    ...(cookie ? { cookie } : {}),
    ...(principal !== undefined ? { principal } : {}),
  });
  if (!r) return sendJson(res, 404, { error: "not found" });
  res.writeHead(r.status, r.headers as Record<string, string | string[]>);
  res.end(req.method === "HEAD" ? undefined : r.body);
}
