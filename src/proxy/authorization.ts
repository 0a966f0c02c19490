/**
 * @module A call that meets "authorization required" (an OAuth upstream that waits for a person): a 2025 client
 * that declared URL elicitation is asked to open the URL, and the call is made once more when the authorization
 * has arrived; any other client (a 2026-07-28 request among them) gets a JSON-RPC error carrying the URL. A
 * tool of a toolset that is off only for want of authorization (its upstream would not even list its tools)
 * meets it too, instead of "Unknown tool".
 */
import { randomUUID } from "node:crypto";
import { exposedName } from "../catalog/names.js";
import type { Catalog } from "../catalog/types.js";
import type { WaitingToolset } from "../search/types.js";
import { AuthorizationRequiredError } from "../upstream/http-auth.js";
import { missingCapability } from "./capability.js";
import { rpcError } from "./errors.js";
import type { Params } from "./host.js";
import type { Call, SessionState } from "./state.js";

/** The upstream an exact tool member of `toolset` exposes as `tool`, if any. */
export function exactUpstream(catalog: Catalog, toolset: string, tool: string): string | undefined {
  for (const m of catalog.toolset.get(toolset)?.members ?? []) {
    if (m.kind !== "tool" || m.regex) continue;
    if (exposedName(m.pattern, catalog.upstreams.get(m.upstream)?.prefix ?? "", m.as) === tool)
      return m.upstream;
  }
  return undefined;
}

/** "Authorization required" for a tool the session cannot see yet because its upstream waits for a person. */
export function pendingAuthorization(s: SessionState, tool: string): AuthorizationRequiredError | undefined {
  const auth = s.host.authorization;
  if (!auth) return undefined;
  for (const u of s.resolution.unavailable) {
    if (u.reason !== "authorization_required" || !u.url) continue;
    const upstream = auth.upstreamOf(u.name, tool);
    if (upstream) return new AuthorizationRequiredError(upstream, u.url);
  }
  return undefined;
}

/**
 * The toolsets the session defers (by config or URL) that are off because their upstream waits for this
 * caller's authorization: find_tools cannot search their tools yet, and names them with the URL.
 */
export function waitingToolsets(s: SessionState): WaitingToolset[] {
  if (!s.host.authorization) return [];
  const out: WaitingToolset[] = [];
  for (const u of s.resolution.unavailable) {
    const upstream = u.upstreams[0];
    if (u.reason !== "authorization_required" || !u.url || !upstream) continue;
    if (s.selection.deferred.includes(u.name)) out.push({ toolset: u.name, upstream, url: u.url });
  }
  return out;
}

/** Runs the call; on "authorization required", elicits (when the client can) and runs it once more. */
export async function authorizing(s: SessionState, call: Call, run: () => Promise<Params>): Promise<Params> {
  try {
    return await run();
  } catch (err) {
    if (!(err instanceof AuthorizationRequiredError)) throw err;
    const auth = s.host.authorization;
    // A 2026-07-28 request cannot be sent server→client requests: it gets the error naming the URL (SPEC §11.7).
    if (!auth || !call.client.codec.askable) throw err;
    if (missingCapability(call.client.capabilities, "elicitation/create", { mode: "url" })) throw err;
    await elicit(s, call, err, auth.wait.bind(auth));
    return run();
  }
}

async function elicit(
  s: SessionState,
  call: Call,
  err: AuthorizationRequiredError,
  wait: NonNullable<SessionState["host"]["authorization"]>["wait"],
): Promise<void> {
  const { upstream, authorizeUrl: url } = err;
  const stop = new AbortController();
  const onAbort = () => stop.abort(call.signal.reason);
  call.signal.addEventListener("abort", onAbort, { once: true });
  // Waiting starts before the person is asked: a flow finished before the client answers is not missed.
  const authorized = wait(s.ref(upstream), stop.signal, s.host.upstream(upstream)?.inputTimeoutMs ?? 300_000);
  authorized.catch(() => {});
  const elicitationId = randomUUID();
  const failed = (what: string) =>
    rpcError(
      err.code,
      `${what}; open ${url} to authorize toolpacks for upstream ${upstream}, then try again`,
      err.data,
    );
  try {
    const request = {
      method: "elicitation/create",
      params: {
        mode: "url",
        elicitationId,
        url,
        message: `toolpacks needs your authorization to use ${upstream} on your behalf.`,
      },
    };
    const answer = await call.ask(request, stop.signal).catch((e: Error) => {
      throw failed(`the client did not take the authorization link (${e.message})`);
    });
    if (answer.action !== "accept")
      throw failed(
        `the authorization of upstream ${upstream} was ${answer.action === "decline" ? "declined" : "cancelled"}`,
      );
    try {
      await authorized;
    } catch (e) {
      throw failed((e as Error).message);
    }
  } finally {
    call.signal.removeEventListener("abort", onAbort);
    stop.abort();
  }
  call.notify({ method: "notifications/elicitation/complete", params: { elicitationId } });
}
