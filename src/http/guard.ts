/** @module DNS-rebinding protection: the Host and Origin of a request must name this server. */
import type { IncomingMessage } from "node:http";

const LOOPBACK = ["localhost", "127.0.0.1", "[::1]", "::1"];

export function isLoopback(host: string): boolean {
  return LOOPBACK.includes(host) || host.startsWith("127.");
}

/** The hostnames a server bound to `bindHost` accepts by default: loopback names when it is loopback, else any. */
export function defaultAllowedHosts(bindHost: string): string[] | undefined {
  return isLoopback(bindHost) ? LOOPBACK : undefined;
}

function hostname(hostHeader: string): string {
  if (hostHeader.startsWith("[")) return hostHeader.slice(0, hostHeader.indexOf("]") + 1);
  const colon = hostHeader.lastIndexOf(":");
  return (colon < 0 ? hostHeader : hostHeader.slice(0, colon)).toLowerCase();
}

/**
 * Undefined when the request may pass; otherwise why not. `allowedHosts` undefined means any Host; an Origin,
 * when a browser sends one, must be one of `allowedOrigins` or name an allowed host.
 */
export function rebindingProblem(
  req: IncomingMessage,
  allowedHosts: readonly string[] | undefined,
  allowedOrigins: readonly string[] = [],
): string | undefined {
  const bad = hostProblem(req, allowedHosts);
  if (bad) return bad;
  const origin = req.headers.origin;
  if (origin && origin !== "null") {
    if (allowedOrigins.includes(origin)) return undefined;
    let originHost: string;
    try {
      originHost = new URL(origin).host;
    } catch {
      return `Origin ${JSON.stringify(origin)} is not a URL`;
    }
    const hosts = allowedHosts ?? (req.headers.host ? [hostname(req.headers.host)] : []);
    if (!hosts.includes(hostname(originHost))) return `Origin ${JSON.stringify(origin)} is not allowed`;
  } else if (origin === "null" && !allowedOrigins.includes("null")) {
    return "Origin null is not allowed";
  }
  return undefined;
}

/** The Host check alone: for public documents (the protected resource metadata) that any web page may read. */
export function hostProblem(
  req: IncomingMessage,
  allowedHosts: readonly string[] | undefined,
): string | undefined {
  if (!allowedHosts) return undefined;
  const host = req.headers.host;
  return host && allowedHosts.includes(hostname(host))
    ? undefined
    : `Host ${JSON.stringify(host ?? "")} is not allowed`;
}
