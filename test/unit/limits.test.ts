/** The pure parts of the limits (SPEC §7.6): config, admission, token buckets, instance slots, client keys, binds. */
import type { IncomingMessage } from "node:http";
import { describe, expect, test } from "vitest";
import { DEFAULT_LIMITS, withOverrides } from "../../src/catalog/limits.js";
import { Admission, type Admitted, type Ticket } from "../../src/door/admission.js";
import { clientAddress, clientKeyOf, trustedProxies } from "../../src/door/client-key.js";
import { InstanceSlots, type SlotUser } from "../../src/door/instance-slots.js";
import { TokenBuckets } from "../../src/door/token-buckets.js";
import { bindProblem, envFlag } from "../../src/http/bind-check.js";
import { rebindingProblem } from "../../src/http/guard.js";
import { LimitNotices } from "../../src/limit-notices.js";
import { silentLogger } from "../../src/log.js";
import type { Peer } from "../../src/proxy/peer.js";
import { Registry } from "../../src/proxy/registry.js";
import { MAX_SUBSCRIPTIONS, Traffic } from "../../src/proxy/traffic.js";
import { credentialRef, type InstanceRef, sessionRef, sharedRef } from "../../src/upstream/instance.js";
import { WireError } from "../../src/wire/errors.js";
import { catalogOf, errorsOf } from "../helpers/catalog.js";

describe("limits: in the config", () => {
  test("a config without limits gets the documented defaults", () => {
    expect(catalogOf("upstreams: { u: { command: x } }\n").limits).toEqual({
      sessions: 10_000,
      sessionsPerClient: 1_000,
      instancesPerMinute: 60,
      batch: 100,
      requestsPerSession: 100,
      pendingOutputBytes: 1_048_576,
      stalledReaderMs: 30_000,
      contexts: 1024,
      contextsPerClient: 256,
      listenStreams: 1024,
      listenStreamsPerClient: 64,
      parkedCalls: 1024,
      parkedCallsPerClient: 64,
      ipv6Prefix: 64,
    });
  });

  test("each key compiles (the timeout in seconds), the first file that sets a key wins, and options override", () => {
    const c = catalogOf(
      "upstreams: { u: { command: x } }\nlimits: { sessions: 50, sessions_per_client: 5, instances_per_minute: 2, batch: 10, requests_per_session: 7, pending_output_bytes: 65536, stalled_reader_timeout: 2.5, contexts: 9, contexts_per_client: 3, listen_streams: 8, listen_streams_per_client: 2, parked_calls: 6, parked_calls_per_client: 1, ipv6_prefix: 56 }\n",
    );
    expect(c.limits).toEqual({
      sessions: 50,
      sessionsPerClient: 5,
      instancesPerMinute: 2,
      batch: 10,
      requestsPerSession: 7,
      pendingOutputBytes: 65536,
      stalledReaderMs: 2500,
      contexts: 9,
      contextsPerClient: 3,
      listenStreams: 8,
      listenStreamsPerClient: 2,
      parkedCalls: 6,
      parkedCallsPerClient: 1,
      ipv6Prefix: 56,
    });
    expect(withOverrides(c.limits, { batch: 3 })).toMatchObject({ batch: 3, sessions: 50 });
    expect(withOverrides(DEFAULT_LIMITS, {})).toBe(DEFAULT_LIMITS);
  });

  test("a limit that is not a number in range, or an unknown one, is refused at its place", () => {
    expect(
      errorsOf("upstreams: { u: { command: x } }\nlimits:\n  sessions: 0\n  batch: many\n  sesions: 4\n"),
    ).toEqual([
      expect.stringMatching(/^packs\.yaml:3:13: limits\.sessions must be >= 1/),
      expect.stringMatching(/^packs\.yaml:4:10: limits\.batch must be a whole number, not string "many"/),
      expect.stringMatching(
        /^packs\.yaml:5:3: unknown key "sesions" in limits \(did you mean "sessions"\?\)/,
      ),
    ]);
  });
});

describe("limits: session admission", () => {
  interface Fake extends Admitted {
    lastSeen: number;
    busy: number;
    holding: boolean;
  }
  /** Admission over a real registry: `sessions` in total, `perClient` each; evicted sessions leave it. */
  function admission(sessions: number, perClient: number) {
    const registry = new Registry<Fake>();
    const catalog = catalogOf("upstreams: { u: { command: x } }\n");
    const evicted: string[] = [];
    const a = new Admission<Fake>({
      registry,
      catalog: () => catalog,
      overrides: { sessions, sessionsPerClient: perClient },
      logger: silentLogger,
      limited: () => {},
      now: () => 0,
      evict: async (s) => {
        evicted.push(s.id);
        registry.delete(s);
      },
      isolated: () => [],
      exists: () => false,
      closeInstance: async () => {},
    });
    const open = async (client: string, id: string, busy = 0) => {
      const t = await a.admit("session", client);
      if (t instanceof WireError) throw t;
      const s: Fake = { id, kind: "session", client, refs: new Map(), lastSeen: 0, busy, holding: false };
      registry.add(s);
      t.bind();
      return s;
    };
    return { a, registry, open, evicted };
  }

  test("a client past its own bound is refused with 503 naming limits.sessions_per_client; others are not", async () => {
    const { a, registry, open } = admission(100, 2);
    const s1 = await open("address:1", "s1");
    await open("address:1", "s2");
    const refused = await a.admit("session", "address:1");
    expect(refused).toBeInstanceOf(WireError);
    expect(refused).toMatchObject({ status: 503, headers: { "retry-after": "30" } });
    expect((refused as WireError).message).toMatch(/limits\.sessions_per_client: 2/);
    expect(await a.admit("session", "address:2")).not.toBeInstanceOf(WireError);
    registry.delete(s1);
    expect(await a.admit("session", "address:1")).not.toBeInstanceOf(WireError);
  });

  test("past the total, the least recently used idle session makes room; a busy one never does", async () => {
    const { a, registry, open, evicted } = admission(3, 10);
    const s1 = await open("address:1", "s1");
    await open("address:1", "s2", 1);
    await open("address:1", "s3");
    registry.touch(s1);
    // s2 is busy, s3 is now the least recently used idle one.
    expect(await a.admit("session", "address:1")).not.toBeInstanceOf(WireError);
    expect(evicted).toEqual(["s3"]);
  });

  test("past the total with no idle session, a newcomer gets 503 naming limits.sessions", async () => {
    const { a, open } = admission(2, 10);
    await open("address:1", "s1", 1);
    await open("address:1", "s2", 1);
    const refused = await a.admit("session", "address:2");
    expect(refused).toMatchObject({ status: 503 });
    expect((refused as WireError).message).toMatch(/limits\.sessions: 2/);
  });

  test("sessions still opening count, so concurrent newcomers cannot overshoot; a failed open gives its place back", async () => {
    const { a } = admission(2, 2);
    const t1 = (await a.admit("session", "address:1")) as Ticket;
    await a.admit("session", "address:1");
    expect(await a.admit("session", "address:1")).toBeInstanceOf(WireError);
    t1.release();
    expect(await a.admit("session", "address:1")).not.toBeInstanceOf(WireError);
  });

  test("a flood of refusals is said loudly once a minute, quietly in between", () => {
    const said: string[] = [];
    let now = 0;
    const notices = new LimitNotices(
      { warn: (m) => void said.push(`warn ${m}`), debug: (m) => void said.push(`debug ${m}`) },
      () => now,
    );
    notices.say("sessions", "x");
    notices.say("sessions", "x");
    notices.say("batch", "y");
    now = 60_000;
    notices.say("sessions", "x");
    expect(said).toEqual(["warn x", "debug x", "warn y", "warn x"]);
  });
});

describe("limits: token buckets", () => {
  test("a client may take a bucketful at once, then one more per refill interval; memory stays bounded", () => {
    let now = 0;
    const b = new TokenBuckets(() => now, 3);
    for (let i = 0; i < 4; i++) expect(b.take("c", 1, 4)).toBe(0);
    expect(b.take("c", 1, 4)).toBe(15_000);
    now = 15_000;
    expect(b.take("c", 1, 4)).toBe(0);
    expect(b.take("other", 1, 4)).toBe(0);
    // A request bigger than the bucket waits for a full one, not forever.
    now = 10 * 60_000;
    expect(b.take("c", 9, 4)).toBe(0);
    for (const k of ["k1", "k2", "k3", "k4"]) b.take(k, 1, 4);
    expect(b.size).toBe(3);
  });
});

describe("limits: instance slots", () => {
  interface FakeSession extends SlotUser {
    client: string;
    lastSeen: number;
    busy: number;
    ref: InstanceRef;
  }

  function slots(max: number, perMinute = 100) {
    const running: InstanceRef[] = [];
    const sessions: FakeSession[] = [];
    const ended: FakeSession[] = [];
    const closed: string[] = [];
    const s = new InstanceSlots<FakeSession>({
      isolated: (u) => running.filter((r) => r.upstream === u),
      exists: (ref) => running.some((r) => r.id === ref.id),
      maxInstances: () => max,
      users: (ref) => sessions.filter((x) => x.ref.id === ref.id),
      endSession: async (x) => {
        ended.push(x);
        sessions.splice(sessions.indexOf(x), 1);
      },
      closeInstance: async (ref) => {
        closed.push(ref.id);
        running.splice(
          running.findIndex((r) => r.id === ref.id),
          1,
        );
      },
      instancesPerMinute: () => perMinute,
      now: () => 0,
    });
    const add = (key: string, lastSeen: number, busy = false, client = "client") => {
      const ref = sessionRef("u", key);
      running.push(ref);
      const session = { client, lastSeen, busy: busy ? 1 : 0, ref };
      sessions.push(session);
      return session;
    };
    return { s, add, running, ended, closed };
  }
  const want = (ref: InstanceRef) => new Map([[ref.upstream, ref]]);

  test("a client's new instance past max_instances takes its own least recently used idle one's slot, ending its session", async () => {
    const { s, add, ended, closed } = slots(3);
    const old = add("a", 10);
    add("b", 5, true);
    add("c", 20);
    await s.reserve(want(sessionRef("u", "d")), "client");
    expect(ended).toEqual([old]);
    expect(closed).toEqual([old.ref.id]);
  });

  test("past max_instances a newcomer takes an idle instance of the client holding the most, never of one at or under its fair share", async () => {
    // Before (#25), the least recently used idle instance went, whoever held it: here, the one client with a
    // single instance would have lost it to the newcomer while another held three.
    const { s, add, ended } = slots(4);
    const lonely = add("one", 1, false, "address:lonely");
    add("h1", 50, false, "address:heavy");
    const heavyOldest = add("h2", 40, false, "address:heavy");
    add("h3", 60, false, "address:heavy");
    await s.reserve(want(sessionRef("u", "new")), "address:new");
    // Fair share: 4 slots over 3 clients = 1; the heavy client holds 3, its least recently used goes.
    expect(ended).toEqual([heavyOldest]);
    expect(ended).not.toContain(lonely);
  });

  test("a newcomer is refused rather than take from clients at their fair share; its own idle instance may always go", async () => {
    const { s, add, ended } = slots(2);
    const a = add("a", 1, false, "address:a");
    add("b", 2, false, "address:b");
    // Fair share: 2 slots over 3 clients = at least 1; a and b hold one each: nobody over it.
    const err = await s.reserve(want(sessionRef("u", "c")), "address:c").catch((e: WireError) => e);
    expect(err).toMatchObject({ status: 503, headers: { "retry-after": "30" } });
    expect((err as Error).message).toMatch(/max_instances: 2\) and none may be taken/);
    expect(ended).toEqual([]);
    // A client at its share may still replace its own idle instance with a new one.
    await s.reserve(want(sessionRef("u", "a2")), "address:a");
    expect(ended).toEqual([a]);
  });

  test("a busy instance of the heaviest client is kept; its idle one goes, then the next heaviest's over its share", async () => {
    const { s, add, ended } = slots(6);
    add("h1", 1, true, "address:heavy");
    const idle = add("h2", 50, false, "address:heavy");
    add("h3", 2, true, "address:heavy");
    const m1 = add("m1", 3, false, "address:middle");
    add("m2", 4, false, "address:middle");
    const light = add("l1", 0, false, "address:light");
    await s.reserve(want(sessionRef("u", "n1")), "address:new");
    expect(ended).toEqual([idle]);
    // 6 slots over 4 clients = 1 each: heavy (2, both busy) cannot give; middle (2) gives its oldest.
    await s.reserve(want(sessionRef("u", "n2")), "address:new2");
    expect(ended).toEqual([idle, m1]);
    expect(ended).not.toContain(light);
  });

  test("an instance that runs for a session still opening is never taken as one nobody uses", async () => {
    const { s, running, ended, closed } = slots(1);
    const opening = sessionRef("u", "opening");
    await s.reserve(want(opening), "address:a");
    running.push(opening); // it runs; its session is not registered yet
    const err = await s.reserve(want(sessionRef("u", "n")), "address:b").catch((e: WireError) => e);
    expect(err).toMatchObject({ status: 503 });
    expect(ended).toEqual([]);
    expect(closed).toEqual([]);
  });

  test("newcomers opening at the same time never promise more slots than max_instances", async () => {
    const { s, add, ended } = slots(2);
    add("a", 1);
    const [r1, r2] = await Promise.all([
      s.reserve(want(sessionRef("u", "n1")), "client"),
      s.reserve(want(sessionRef("u", "n2")), "client"),
    ]);
    // One took the free slot, the other the idle instance's; a third must wait for them to run.
    expect(ended).toHaveLength(1);
    const err = await s.reserve(want(sessionRef("u", "n3")), "client").catch((e: WireError) => e);
    expect(err).toMatchObject({ status: 503 });
    r1();
    r2();
    await s.reserve(want(sessionRef("u", "n3")), "client");
  });

  test("an instance whose session holds a parked call or a listen stream is never taken, however long ago it was used", async () => {
    // Before (#25), only requests in flight kept an instance: a newcomer ended the session of a parked call.
    const { s, add, ended, closed } = slots(2);
    const parked = Object.assign(add("a", 1), { holding: true, pinned: true });
    const idle = add("b", 50);
    await s.reserve(want(sessionRef("u", "d")), "client");
    expect(ended).toEqual([idle]);
    expect(closed).toEqual([idle.ref.id]);
    expect(ended).not.toContain(parked);
  });

  test("an instance nobody uses goes before any in use", async () => {
    const { s, add, running, closed } = slots(2);
    add("a", 1);
    const lonely = credentialRef("u", { env: { K: "v" } });
    running.push(lonely);
    await s.reserve(want(sessionRef("u", "d")), "client");
    expect(closed).toEqual([lonely.id]);
  });

  test("with every slot busy the newcomer gets 503 naming max_instances, and its rate is not spent", async () => {
    const { s, add } = slots(1, 1);
    const a = add("a", 1, true);
    const err = await s.reserve(want(sessionRef("u", "d")), "client").catch((e: WireError) => e);
    expect(err).toBeInstanceOf(WireError);
    expect(err).toMatchObject({ status: 503 });
    expect((err as Error).message).toMatch(/max_instances: 1\) and every one has a request in flight/);
    a.busy = 0;
    await s.reserve(want(sessionRef("u", "d")), "client");
  });

  test("a client past its start rate gets 429 with the seconds to wait; shared instances and running ones cost nothing", async () => {
    const { s, add } = slots(10, 2);
    await s.reserve(want(sessionRef("u", "x1")), "client");
    await s.reserve(want(sessionRef("u", "x2")), "client");
    const running = add("a", 1).ref;
    await s.reserve(new Map([["u", running]]), "client");
    await s.reserve(new Map([["u", sharedRef("u")]]), "client");
    const err = await s.reserve(want(sessionRef("u", "x3")), "client").catch((e: WireError) => e);
    expect(err).toMatchObject({ status: 429, headers: { "retry-after": "30" } });
    expect((err as Error).message).toMatch(/limits\.instances_per_minute: 2/);
    await s.reserve(want(sessionRef("u", "x3")), "another client");
  });
});

describe("limits: who a client is", () => {
  test("a client is its remote address (IPv4-mapped spelled plain); X-Forwarded-For is ignored unless from a trusted proxy", () => {
    expect(clientKeyOf("::ffff:10.1.2.3", {}, {})).toBe("address:10.1.2.3");
    expect(clientAddress("10.1.2.3", { "x-forwarded-for": "6.6.6.6" }, undefined)).toBe("10.1.2.3");
    const proxies = trustedProxies(["10.0.0.0/8", "fd00::1"]);
    expect(clientAddress("10.1.2.3", { "x-forwarded-for": "6.6.6.6, 203.0.113.9, 10.9.9.9" }, proxies)).toBe(
      "203.0.113.9",
    );
    expect(clientAddress("192.0.2.1", { "x-forwarded-for": "6.6.6.6" }, proxies)).toBe("192.0.2.1");
    expect(clientAddress("fd00::1", { "x-forwarded-for": "2001:db8::7" }, proxies)).toBe("2001:db8::7");
  });

  test("an authenticated client is its token (never the token itself) or its principal; made-up credential headers are not a key", () => {
    const withToken = { authorization: "Bearer sekrit-token-1", "x-api-key": "made-up" };
    const key = clientKeyOf("10.1.2.3", withToken, { authenticated: true });
    expect(key).toMatch(/^token:[0-9a-f]{16}$/);
    expect(key).not.toContain("sekrit");
    expect(clientKeyOf("10.1.2.3", withToken, {})).toBe("address:10.1.2.3");
    expect(clientKeyOf("10.1.2.3", withToken, { principal: "alice" })).toBe("principal:alice");
  });

  test("a trusted proxy that is not an address or a range is refused naming it", () => {
    expect(() => trustedProxies(["10.0.0.0/33"])).toThrow(/"10\.0\.0\.0\/33" is not an IP address/);
    expect(() => trustedProxies(["proxy.local"])).toThrow(/proxy\.local/);
  });
});

describe("limits: binding and origins", () => {
  test("an exposed bind needs --allowed-host, auth: or --insecure-bind; loopback needs nothing", () => {
    const bind = (host: string, more: Partial<Parameters<typeof bindProblem>[0]> = {}) =>
      bindProblem({ host, allowedHosts: [], authenticated: false, insecure: false, ...more });
    expect(bind("0.0.0.0")).toMatch(/--allowed-host.*auth:.*--insecure-bind/s);
    expect(bind("::")).toBeDefined();
    expect(bind("192.168.1.5")).toBeDefined();
    for (const h of ["127.0.0.1", "localhost", "::1", "::ffff:127.0.0.1", "127.0.0.2"])
      expect(bind(h)).toBeUndefined();
    expect(bind("0.0.0.0", { allowedHosts: ["mcp.example.com"] })).toBeUndefined();
    expect(bind("0.0.0.0", { authenticated: true })).toBeUndefined();
    expect(bind("0.0.0.0", { insecure: true })).toBeUndefined();
    expect([envFlag("1"), envFlag("true"), envFlag("0"), envFlag(""), envFlag(undefined)]).toEqual([
      true,
      true,
      false,
      false,
      false,
    ]);
  });

  test("an Origin that only matches the request's own Host is refused (DNS rebinding)", () => {
    const r = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;
    expect(
      rebindingProblem(r({ host: "evil.example:4040", origin: "http://evil.example:4040" }), undefined),
    ).toMatch(/Origin "http:\/\/evil\.example:4040" is not allowed/);
    expect(rebindingProblem(r({ host: "evil.example:4040" }), undefined)).toBeUndefined();
    expect(
      rebindingProblem(r({ host: "gw.example.com", origin: "https://gw.example.com" }), ["gw.example.com"]),
    ).toBeUndefined();
  });
});

describe("limits: per session", () => {
  test("a session's resource subscriptions are bounded; unsubscribing makes room again", () => {
    const traffic = new Traffic({
      users: () => [],
      upstream: () => undefined,
      logger: silentLogger,
      untied: () => {},
    });
    const peer = {} as Peer;
    const ref = sharedRef("u");
    for (let i = 0; i < MAX_SUBSCRIPTIONS; i++) traffic.subscribe(ref, `file:///${i}`, peer);
    expect(traffic.subscribe(ref, "file:///0", peer)).toBe(false);
    expect(() => traffic.subscribe(ref, "file:///more", peer)).toThrow(/at most 1000 resource subscriptions/);
    expect(traffic.subscribe(ref, "file:///more", {} as Peer)).toBe(true);
    traffic.unsubscribe(ref, "file:///1", peer);
    expect(traffic.subscribe(ref, "file:///more", peer)).toBe(false);
  });
});
