/**
 * @module The OAuth pages on the HTTP server (`/oauth/UPSTREAM/start`, `/oauth/callback`,
 * `/oauth/client-metadata.json`): behind the Host/Origin check, open without a bearer token (a browser has
 * none). Who the request is, is found here and only its identity passed on: the bearer token it carries, or
 * the token an administrator posts to a shared upstream's start page (taken out of the form, never passed on).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Principal } from "../auth/types.js";
import { identityOf } from "../door/caller.js";
import type { FlowRequest, FlowResponse } from "../oauth/routes.js";
import { readBody } from "./body.js";
import { sendJson } from "./replies.js";

export type OAuthPages = (req: FlowRequest) => Promise<FlowResponse | undefined>;

/** The start page's form is a few short fields. */
const MAX_FORM_BYTES = 16 * 1024;

export async function serveOAuth(
  req: IncomingMessage,
  res: ServerResponse,
  url: string,
  pages: OAuthPages,
  identify: (authorization: string | undefined) => Promise<Principal | undefined>,
  problem: string | undefined,
): Promise<void> {
  if (problem) {
    req.resume();
    return sendJson(res, 403, { error: `Forbidden: ${problem}` });
  }
  let form: URLSearchParams | undefined;
  if (req.method === "POST") {
    const body = await readBody(req, MAX_FORM_BYTES);
    if (!body.ok)
      return sendJson(
        res,
        413,
        { error: "the form is too large" },
        body.drained ? {} : { connection: "close" },
      );
    const type = String(req.headers["content-type"] ?? "")
      .split(";")[0]!
      .trim()
      .toLowerCase();
    form = new URLSearchParams(type === "application/x-www-form-urlencoded" ? body.text : "");
  } else req.resume();
  const posted = form?.get("token")?.trim();
  form?.delete("token");
  const who =
    (await identify(req.headers.authorization)) ?? (posted ? await identify(`Bearer ${posted}`) : undefined);
  const principal = identityOf(who);
  const cookie = req.headers.cookie;
  const r = await pages({
    method: req.method ?? "GET",
    url,
    ...(cookie ? { cookie } : {}),
    ...(principal !== undefined ? { principal } : {}),
    ...(form ? { form } : {}),
  });
  if (!r) return sendJson(res, 404, { error: "not found" });
  res.writeHead(r.status, r.headers as Record<string, string | string[]>);
  res.end(req.method === "HEAD" ? undefined : r.body);
}
