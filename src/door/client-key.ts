/**
 * @module Who a request comes from, for per-client limits: its principal when it authenticated, else its remote
 * address (or, from a trusted proxy, the address that proxy forwarded in X-Forwarded-For): an IPv4 address as it
 * is, an IPv6 one by its network (`limits.ipv6_prefix`, a /64 by default: one host is handed a whole /64, so
 * counting each address would let it be any number of clients). Credential headers are not a key: nothing checks
 * them, so a client could make up a new one for every request.
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

/** The 8 groups of an IPv6 address (a trailing dotted IPv4 part becomes the last two; a zone is dropped). */
function groups(address: string): number[] | undefined {
  let a = address.split("%")[0]!.toLowerCase();
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (dotted) {
    const [b0, b1, b2, b3] = dotted[2]!.split(".").map(Number) as [number, number, number, number];
    a = `${dotted[1]}${((b0 << 8) | b1).toString(16)}:${((b2 << 8) | b3).toString(16)}`;
  }
  const [head = "", tail, extra] = a.split("::");
  if (extra !== undefined) return undefined;
  const parse = (part: string) => (part ? part.split(":").map((g) => Number.parseInt(g, 16)) : []);
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const fill = 8 - left.length - right.length;
  if (fill < 0 || (tail === undefined && fill !== 0)) return undefined;
  return [...left, ...new Array<number>(fill).fill(0), ...right];
}

/**
 * The network of an address that counts as one client: an IPv4 address (a `::ffff:` one included) is itself; an
 * IPv6 one is its first `prefix` bits, written `NETWORK/PREFIX` (at 128, the address itself).
 */
export function clientNetwork(address: string, prefix: number): string {
  const a = plain(address);
  if (isIP(a) !== 6 || prefix >= 128) return a;
  const g = groups(a);
  if (!g) return a;
  const bits = Math.max(0, Math.floor(prefix));
  const masked = g.map((v, i) => {
    const keep = Math.min(16, Math.max(0, bits - i * 16));
    return keep === 0 ? 0 : v & (0xffff << (16 - keep)) & 0xffff;
  });
  // The shortest spelling: the longest run of zero groups as `::`.
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (masked[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && masked[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j;
  }
  const hex = masked.map((v) => v.toString(16));
  const text =
    bestLen > 1 ? `${hex.slice(0, best).join(":")}::${hex.slice(best + bestLen).join(":")}` : hex.join(":");
  return `${text}/${bits}`;
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
    /** IPv6 clients count by this prefix (default 64, `limits.ipv6_prefix`). */
    readonly ipv6Prefix?: number;
  },
): string {
  if (options.principal) return `principal:${options.principal}`;
  const token = options.authenticated ? tokenKey(headers) : undefined;
  if (token) return token;
  return `address:${clientNetwork(clientAddress(remote, headers, options.proxies), options.ipv6Prefix ?? 64)}`;
}
