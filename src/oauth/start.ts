/**
 * @module The start page (`/oauth/UPSTREAM/start`): who a flow is for, and how the browser proves it, before
 * anything is asked of the authorization server. Opening it (GET) never starts a flow: a per-user link shows whose
 * account it binds and asks to continue (a POST from this page), a shared upstream's asks for an administrator.
 * A bearer token sent with the request proves its principal at once. A link starts one flow, however often it
 * is opened (see flows.ts).
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { OAuthClient } from "./client.js";
import { OAuthFlowError } from "./errors.js";
import { isAdmin } from "./flow.js";
import { formPage, PAGE_HEADERS } from "./page.js";
import { OAUTH_PATHS } from "./paths.js";
import { ticketPrincipal } from "./ticket.js";
import type { FlowRequest, FlowResponse, OAuthUpstream } from "./types.js";

/** The cookie whose value the start page's form must carry back (SameSite=Strict: no other site can post it). */
const CONFIRM_COOKIE = "toolpacks_confirm";
const NONCE = /^[A-Za-z0-9_-]{32}$/;

export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of header?.split(";") ?? []) {
    const i = part.indexOf("=");
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

/** The cookie that ties a callback to the browser that started the flow (nobody else's browser can finish it). */
export const bindingCookie = (state: string) =>
  `toolpacks_oauth_${createHash("sha256").update(state).digest("hex").slice(0, 16)}`;

/** How a page names an identity: its subject, without the namespace (`static:alice` → alice). */
const shown = (identity: string) => identity.slice(identity.indexOf(":") + 1);

const digest = (s: string) => createHash("sha256").update(s).digest();

/** True when the form came from our own page: its field matches the SameSite=Strict cookie that page set. */
function confirmed(req: FlowRequest): boolean {
  const field = req.form?.get("confirm") ?? "";
  const cookie = cookieValue(req.cookie, CONFIRM_COOKIE) ?? "";
  return NONCE.test(field) && timingSafeEqual(digest(field), digest(cookie));
}

export interface StartOptions {
  /** "; Secure" on an https public URL. */
  readonly secure: string;
}

export async function startPage(
  client: OAuthClient,
  upstream: string,
  url: URL,
  req: FlowRequest,
  o: StartOptions,
): Promise<FlowResponse> {
  const up = client.upstream(upstream);
  if ((up.oauth.grant ?? "authorization_code") !== "authorization_code")
    throw new OAuthFlowError(
      "config",
      `upstream ${upstream} uses the client_credentials grant: nobody authorizes it`,
    );
  const scope = url.searchParams.get("scope")?.split(/\s+/).filter(Boolean) ?? [];
  const opts = scope.length ? { scopes: scope } : {};
  const post = req.method === "POST";
  const go = async (link: string, principal: string | undefined, owner: string): Promise<FlowResponse> => {
    const opened = await client.start(link, upstream, principal, owner, opts);
    const state = new URL(opened.url).searchParams.get("state") ?? "";
    const cookie = `${bindingCookie(state)}=${opened.nonce}; Path=${OAUTH_PATHS.callback}; Max-Age=600; HttpOnly; SameSite=Lax${o.secure}`;
    return {
      status: post ? 303 : 302,
      headers: { location: opened.url, "set-cookie": cookie, "cache-control": "no-store" },
      body: "",
    };
  };
  const ask = (title: string, texts: string[], button: string, secret?: boolean): FlowResponse => {
    const known = cookieValue(req.cookie, CONFIRM_COOKIE);
    const nonce = known && NONCE.test(known) ? known : randomBytes(24).toString("base64url");
    const form = formPage(title, texts, {
      action: `${url.pathname}${url.search}`,
      fields: { confirm: nonce },
      button,
      ...(secret ? { secret: { name: "token", label: "Your toolpacks token (an administrator's)" } } : {}),
    });
    const cookie = `${CONFIRM_COOKIE}=${nonce}; Path=/oauth/; Max-Age=600; HttpOnly; SameSite=Strict${o.secure}`;
    // same-origin, not no-referrer: under no-referrer a browser posts the form with `Origin: null`, which the
    // Host/Origin check refuses; the ticket in this page's URL still goes to no other site.
    const headers = { ...PAGE_HEADERS, "referrer-policy": "same-origin", "set-cookie": cookie };
    return { status: 200, headers, body: form };
  };
  if (post && !confirmed(req))
    throw new OAuthFlowError(
      "forbidden",
      "this form did not come from toolpacks' own page: open the link again",
    );

  if (up.oauth.mode === "shared") return shared(up, req, scope, post, go, ask);

  const ticket = url.searchParams.get("ticket");
  if (ticket) {
    const named = await ticketPrincipal(client.tickets, client.records, upstream, ticket);
    if (req.principal !== undefined && req.principal !== named)
      throw new OAuthFlowError(
        "forbidden",
        `this link is for another toolpacks user: nothing was stored; use the link your own client gave you`,
      );
    if (req.principal !== undefined || post) return go(`ticket\0${ticket}`, named, named);
    const who = shown(named);
    return ask(
      `Connect ${upstream} for ${who}?`,
      [
        `This link lets toolpacks act in ${upstream} for the toolpacks user ${who}: the ${upstream} account you sign in with next is the one every call of ${who} will use.`,
        `If you are not ${who} (if someone sent you this link), close this page: nothing has been stored.`,
      ],
      `Continue as ${who}`,
    );
  }
  if (req.principal !== undefined)
    return go(`bearer\0${upstream}\0${req.principal}\0${scope.join(" ")}`, req.principal, req.principal);
  throw new OAuthFlowError(
    "principal",
    `upstream ${upstream} is per-user: sign in to toolpacks first, or open the link toolpacks gave you`,
  );
}

/** A shared grant: only an administrator `admins` names replaces it here (`toolpacks login` is the other way). */
function shared(
  up: OAuthUpstream,
  req: FlowRequest,
  scope: readonly string[],
  post: boolean,
  go: (link: string, principal: undefined, owner: string) => Promise<FlowResponse>,
  ask: (title: string, texts: string[], button: string, secret?: boolean) => FlowResponse,
): Promise<FlowResponse> | FlowResponse {
  const login = `toolpacks login ${up.name} with this config on the server`;
  if (isAdmin(up, req.principal))
    return go(`admin\0${up.name}\0${req.principal}\0${scope.join(" ")}`, undefined, req.principal!);
  if (req.principal !== undefined || post)
    throw new OAuthFlowError(
      "forbidden",
      `only an administrator of ${up.name} (oauth.admins) may replace the grant everyone's calls use: nothing was stored; ask one, or run ${login}`,
    );
  const intro = `${up.name} is used with one account for everyone on this toolpacks: authorizing it here replaces the account every user's calls run in.`;
  if (!up.oauth.admins?.length)
    throw new OAuthFlowError(
      "forbidden",
      `${intro} No administrator is named for it (oauth.admins), so it is authorized with ${login}.`,
    );
  return ask(
    `Authorize ${up.name} for everyone`,
    [intro, "Only an administrator named in its oauth.admins may do it: sign in with your toolpacks token."],
    "Authorize as administrator",
    true,
  );
}
