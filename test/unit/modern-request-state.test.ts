/** The signed requestState of the 2026-client ↔ 2025-server bridge (src/modern/request-state.ts). */
import { createHmac } from "node:crypto";
import { describe, expect, test } from "vitest";
import {
  canonicalJson,
  createRequestStateCodec,
  digest,
  fromBase64url,
  requestDigest,
} from "../../src/modern/request-state.js";
import { errors } from "../../src/wire/errors.js";

const KEY = new Uint8Array(32).fill(7);
const OTHER = new Uint8Array(32).fill(9);
const clock = { t: 1_000_000 };
const codec = (keys: Uint8Array[] = [KEY]) =>
  createRequestStateCodec({ keys, ttlMs: 60_000, now: () => clock.t });
const owner = digest("bearer", "alice");
const request = requestDigest("tools/call", { name: "deploy", arguments: { env: "prod" } });
const state = { bridge: "b-1", upstream: "github", owner, request };

/** Re-signs a payload with KEY: what a forger holding no key cannot do, used to reach the checks after the MAC. */
function forge(body: object, key: Uint8Array = KEY): string {
  const signed = `tprs1.${Buffer.from(JSON.stringify(body)).toString("base64url")}`;
  const mac = createHmac("sha256", key)
    .update("toolpacks.requestState.v1\0")
    .update(signed)
    .digest("base64url");
  return `${signed}.${mac}`;
}

describe("a requestState round trip", () => {
  test("a sealed state opens for the same owner and request before it expires", () => {
    const token = codec().seal(state);
    expect(codec().open(token, { owner, request })).toEqual({
      ok: true,
      state: { ...state, exp: clock.t + 60_000 },
    });
  });

  test("a wrapped upstream requestState comes back as it went in", () => {
    const sealed = codec().seal({ ...state, inner: "upstream-opaque==" });
    const opened = codec().open(sealed, { owner, request });
    expect(opened.ok && opened.state.inner).toBe("upstream-opaque==");
  });

  test("it opens on another replica that holds the same key, and during a key rotation", () => {
    const token = codec([OTHER]).seal(state);
    expect(codec([KEY, OTHER]).open(token, { owner, request }).ok).toBe(true);
  });
});

describe("a requestState is refused with a typed reason", () => {
  const token = codec().seal(state);
  const [v, payload, mac] = token.split(".") as [string, string, string];
  const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === "A" ? "B" : "A") + s.slice(i + 1);

  test.each([
    ["a tampered payload", `${v}.${flip(payload, 5)}.${mac}`, "signature"],
    ["a tampered signature", `${v}.${payload}.${flip(mac, 3)}`, "signature"],
    ["a state signed with a foreign key", codec([OTHER]).seal(state), "signature"],
    ["another version prefix", `tp1.${payload}.${mac}`, "malformed"],
    ["a missing part", `${v}.${payload}`, "malformed"],
    ["an extra part", `${token}.x`, "malformed"],
    ["padding on the payload", `${v}.${payload}=.${mac}`, "malformed"],
    ["base64 (not url) characters", `${v}.${payload.replace(/-/g, "+")}+.${mac}`, "malformed"],
    ["a short signature", `${v}.${payload}.${mac.slice(0, 20)}`, "malformed"],
    ["an oversized token", `${v}.${"A".repeat(17_000)}.${mac}`, "malformed"],
    ["the empty string", "", "malformed"],
  ])("%s → %s", (_name, bad, reason) => {
    expect(codec().open(bad, { owner, request })).toEqual({ ok: false, reason });
  });

  test("an expired state → expired (fake clock)", () => {
    const sealed = codec().seal(state);
    clock.t += 60_000;
    try {
      expect(codec().open(sealed, { owner, request })).toEqual({ ok: false, reason: "expired" });
    } finally {
      clock.t -= 60_000;
    }
  });

  test("another caller presenting it → owner", () => {
    expect(codec().open(token, { owner: digest("bearer", "mallory"), request })).toEqual({
      ok: false,
      reason: "owner",
    });
  });

  test("a retry of another request → request", () => {
    const other = requestDigest("tools/call", { name: "deploy", arguments: { env: "staging" } });
    expect(codec().open(token, { owner, request: other })).toEqual({ ok: false, reason: "request" });
  });

  test("a validly signed payload of the wrong shape → malformed", () => {
    expect(
      codec().open(forge({ b: 1, u: "x", o: owner, r: request, e: clock.t + 1 }), { owner, request }),
    ).toEqual({
      ok: false,
      reason: "malformed",
    });
  });

  test("the wire answer never says why (-32602, in-band)", () => {
    const refused = errors.requestState();
    // In band: answered with HTTP 200, whatever the reason (which goes to logs only).
    expect(refused.status).toBeUndefined();
    expect(refused.body).toEqual({
      code: -32602,
      message: "Invalid or expired requestState",
      data: { reason: "invalid_request_state" },
    });
  });
});

describe("keys and digests", () => {
  test.each([[[]], [[new Uint8Array(31)]], [[KEY, new Uint8Array(16)]]])(
    "keys %j are refused at construction",
    (keys) => {
      expect(() => createRequestStateCodec({ keys, ttlMs: 1, now: () => 0 })).toThrow(RangeError);
    },
  );

  test("the retry's _meta, inputResponses and requestState do not change the request digest; arguments do", () => {
    const first = {
      name: "deploy",
      arguments: { b: 1, a: [1, { y: 2, x: 1 }] },
      _meta: { progressToken: 1 },
    };
    const retry = {
      arguments: { a: [1, { x: 1, y: 2 }], b: 1 },
      name: "deploy",
      inputResponses: { k: { action: "accept" } },
      requestState: "tp1.x.y",
      _meta: { progressToken: 2 },
    };
    expect(requestDigest("tools/call", retry)).toBe(requestDigest("tools/call", first));
    expect(requestDigest("prompts/get", first)).not.toBe(requestDigest("tools/call", first));
    expect(requestDigest("tools/call", { ...first, arguments: { b: 2 } })).not.toBe(
      requestDigest("tools/call", first),
    );
  });

  test("digest parts are length-prefixed", () => {
    expect(digest("ab", "c")).not.toBe(digest("a", "bc"));
  });

  test.each([
    [{ b: 1, a: { d: [3, { f: 1, e: 2 }], c: null } }, '{"a":{"c":null,"d":[3,{"e":2,"f":1}]},"b":1}'],
    [{ a: undefined, b: "x" }, '{"b":"x"}'],
    [[undefined, 1], "[null,1]"],
  ])("canonicalJson(%j)", (value, json) => {
    expect(canonicalJson(value)).toBe(json);
  });

  test.each([
    ["AQID", [1, 2, 3]],
    ["AQI", [1, 2]],
    ["AQJ", undefined],
    ["AQI=", undefined],
    ["A+I", undefined],
  ])("fromBase64url(%s) takes one spelling only", (s, bytes) => {
    const b = fromBase64url(s);
    expect(b ? [...b] : undefined).toEqual(bytes);
  });
});
