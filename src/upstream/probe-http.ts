/**
 * @module The era probe of an HTTP upstream: one 2026-07-28 POST of `server/discover` (with `MCP-Protocol-Version`
 * and `Mcp-Method`, no session), its answer read as JSON or SSE, or as the status and body of a refusal.
 */
import type { Dispatcher } from "undici";
import { requestHeaders } from "../modern/headers.js";
import { UpstreamUnreachableError } from "./http-answer.js";
import { HttpExchange } from "./http-exchange.js";
import {
  discoverMessage,
  type ProbeIdentity,
  type ProbeOutcome,
  type ProbeVerdict,
  probeAnswer,
  probeWith,
} from "./probe.js";

/** The largest probe answer read (a DiscoverResult is small). */
const PROBE_BYTES = 4 * 1024 * 1024;

export interface HttpProbe {
  readonly url: URL;
  /** The upstream's configured headers and the instance's forwarded credentials. */
  readonly headers: Readonly<Record<string, string>>;
  readonly dispatcher?: Dispatcher;
  readonly who: ProbeIdentity;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

export function probeHttp(probe: HttpProbe): Promise<ProbeVerdict> {
  const http = new HttpExchange(probe.url, probe.dispatcher, 3);
  return probeWith((version) => exchange(http, probe, version), "http");
}

async function exchange(http: HttpExchange, probe: HttpProbe, version: string): Promise<ProbeOutcome> {
  const timeout = AbortSignal.timeout(probe.timeoutMs);
  const signal = probe.signal ? AbortSignal.any([probe.signal, timeout]) : timeout;
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(probe.headers)) headers[k.toLowerCase()] = v;
  Object.assign(headers, {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    ...requestHeaders({ method: "server/discover" }, [], version),
  });
  const who = `upstream ${probe.url.host}`;
  try {
    const res = await http.request(
      "POST",
      headers,
      JSON.stringify(discoverMessage(version, probe.who)),
      signal,
    );
    if (res.statusCode >= 300) {
      const answer = await http.answer(res);
      return { kind: "http-error", status: answer.status, body: answer.body };
    }
    const type = String(res.headers["content-type"] ?? "")
      .split(";")[0]!
      .trim()
      .toLowerCase();
    let found: ProbeOutcome | undefined;
    const read = (data: string) => {
      try {
        const parsed = JSON.parse(data) as unknown;
        for (const m of Array.isArray(parsed) ? parsed : [parsed]) found ??= probeAnswer(m);
      } catch {}
    };
    if (type === "text/event-stream") {
      await http.events(res, PROBE_BYTES, who, read, () => found !== undefined);
      res.body.destroy();
    } else read(await http.text(res, PROBE_BYTES, who));
    // 2xx without an answer to the probe (a web page, say): no DiscoverResult, which reads as legacy.
    return found ?? { kind: "result", result: undefined };
  } catch (err) {
    if (timeout.aborted) return { kind: "timeout", ms: probe.timeoutMs };
    if (err instanceof UpstreamUnreachableError) return { kind: "network-error", message: err.message };
    return { kind: "network-error", message: err instanceof Error ? err.message : String(err) };
  }
}
