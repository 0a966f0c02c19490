/** Who counts as one client for per-client limits (SPEC §7.6): IPv6 clients by their network, IPv4 by address. */
import { describe, expect, test } from "vitest";
import { clientKeyOf, clientNetwork } from "../../src/door/client-key.js";

describe("a client is its network for IPv6, its address for IPv4", () => {
  test("two addresses of one IPv6 /64 are one client; another /64 is another", () => {
    // Before, each IPv6 address was a client of its own: one host with a /64 was any number of clients.
    const a = clientKeyOf("2001:db8:1:2::1", {}, {});
    const b = clientKeyOf("2001:db8:1:2:dead:beef:0:7", {}, {});
    expect(a).toBe("address:2001:db8:1:2::/64");
    expect(b).toBe(a);
    expect(clientKeyOf("2001:db8:1:3::1", {}, {})).not.toBe(a);
  });

  test("the prefix is configurable: at /48 two /64s of one site are one client; at /128 each address counts", () => {
    expect(clientKeyOf("2001:db8:1:2::1", {}, { ipv6Prefix: 48 })).toBe("address:2001:db8:1::/48");
    expect(clientKeyOf("2001:db8:1:3::1", {}, { ipv6Prefix: 48 })).toBe("address:2001:db8:1::/48");
    expect(clientKeyOf("2001:db8:1:2::1", {}, { ipv6Prefix: 128 })).toBe("address:2001:db8:1:2::1");
    expect(clientNetwork("2001:db8:abcd:12ff::1", 56)).toBe("2001:db8:abcd:1200::/56");
  });

  test("IPv4 stays the exact address, an IPv4-mapped IPv6 address is that IPv4 address, whatever the prefix", () => {
    expect(clientKeyOf("10.1.2.3", {}, { ipv6Prefix: 8 })).toBe("address:10.1.2.3");
    expect(clientKeyOf("10.1.2.4", {}, {})).toBe("address:10.1.2.4");
    expect(clientKeyOf("::ffff:10.1.2.3", {}, {})).toBe("address:10.1.2.3");
  });

  test("every spelling of an IPv6 address gives one key (zones, embedded IPv4, full form, case)", () => {
    const key = clientNetwork("2001:db8:0:1::5", 64);
    expect(clientNetwork("2001:0DB8:0000:0001:0000:0000:0000:0005", 64)).toBe(key);
    expect(clientNetwork("2001:db8:0:1::5%eth0", 64)).toBe(key);
    expect(clientNetwork("2001:db8:0:1::10.0.0.5", 64)).toBe(key);
    expect(clientNetwork("::1", 64)).toBe("::/64");
    expect(clientNetwork("fe80::1", 10)).toBe("fe80::/10");
  });

  test("what is not an address is kept as it is (stdio, an unknown peer)", () => {
    expect(clientNetwork("stdio", 64)).toBe("stdio");
    expect(clientNetwork("unknown", 64)).toBe("unknown");
  });
});
