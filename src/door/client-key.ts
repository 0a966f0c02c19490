/**
 * @module Who a request comes from, for per-client limits: its principal when it authenticated, else its remote
 * address (or, from a trusted proxy, the address that proxy forwarded in X-Forwarded-For). Credential headers
 * are not a key: nothing checks them, so a client could make up a new one for every request.
 */
import { createHash } from "node:crypto";
import { BlockList, isIP } from "node:net";
import type { Headers } from "./arrival.js";

/** The addresses (and `ADDR/PREFIX` ranges) whose X-Forwarded-For is believed; undefined when none are. */
export type TrustedProxies = BlockList | undefined;

/** Parses `--trusted-proxy` values; throws naming the first that is neither an IP address nor a range. */
export function trustedProxies(specs: readonly string[]): TrustedProxies {
  if (!specs.length) return undefined;
  const list = new BlockList();
  for (const spec of specs) {
    const [addr = "", prefix, extra] = spec.trim().split("/");
    const family = isIP(addr);
    const bits = prefix === undefined ? undefined : Number(prefix);
    const max = family === 6 ? 128 : 32;
    if (
      !family ||
      extra !== undefined ||
      (bits !== undefined && !(Number.isInteger(bits) && bits >= 0 && bits <= max))
    )
      throw new Error(`"${spec}" is not an IP address or ADDRESS/PREFIX range`);
    const type = family === 6 ? "ipv6" : "ipv4";
    if (bits === undefined) list.addAddress(addr, type);
    else list.addSubnet(addr, bits, type);
  }
  return list;
}

/** `::ffff:1.2.3.4` is 1.2.3.4: one client, however the socket spells it. */
function plain(address: string): string {
  const a = address.trim();
  return a.startsWith("::ffff:") && isIP(a.slice(7)) === 4 ? a.slice(7) : a;
}

function trusted(list: BlockList, address: string): boolean {
  const family = isIP(address);
  return family !== 0 && list.check(address, family === 6 ? "ipv6" : "ipv4");
}

/** The client's address: the socket's peer, or from a trusted proxy the last address it did not add itself. */
export function clientAddress(remote: string, headers: Headers, proxies: TrustedProxies): string {
  const peer = plain(remote);
  if (!proxies || !trusted(proxies, peer)) return peer;
  const header = headers["x-forwarded-for"];
  const hops = (typeof header === "string" ? header : (header ?? []).join(","))
    .split(",")
    .map(plain)
    .filter((h) => isIP(h) !== 0);
  for (let i = hops.length - 1; i >= 0; i--) if (!trusted(proxies, hops[i]!)) return hops[i]!;
  return hops[0] ?? peer;
}

/** A bearer token, as a key that names it without holding it. */
function tokenKey(headers: Headers): string | undefined {
  const auth = headers.authorization;
  const m = /^Bearer\s+(.+)$/i.exec(typeof auth === "string" ? auth : "");
  if (!m) return undefined;
  return `token:${createHash("sha256").update(m[1]!.trim()).digest("hex").slice(0, 16)}`;
}

/**
 * The key per-client limits count under. `principal` is the authenticated subject when the caller has one;
 * `authenticated` says the bearer token was checked (then the token itself names the client).
 */
export function clientKeyOf(
  remote: string,
  headers: Headers,
  options: {
    readonly proxies?: TrustedProxies;
    readonly authenticated?: boolean;
    readonly principal?: string;
  },
): string {
  if (options.principal) return `principal:${options.principal}`;
  const token = options.authenticated ? tokenKey(headers) : undefined;
  return token ?? `address:${clientAddress(remote, headers, options.proxies)}`;
}
