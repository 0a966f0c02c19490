import type { IncomingMessage } from "node:http";
import { describe, expect, test } from "vitest";
import { authorized } from "../../src/http/auth.js";
import { rebindingProblem } from "../../src/http/guard.js";
import { signSessionId, verifySessionId } from "../../src/http/session-id.js";
import { HandleStore } from "../../src/proxy/handles.js";
import type { Route } from "../../src/resolve.js";
import { BACKOFF_CAP_MS, backoffDelay } from "../../src/upstream/backoff.js";

const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe("restart backoff", () => {
  test("a crashing upstream is restarted at once, then after doubling delays up to a cap", () => {
    expect([1, 2, 3, 4, 5].map(backoffDelay)).toEqual([0, 1000, 2000, 4000, 8000]);
    expect(backoffDelay(50)).toBe(BACKOFF_CAP_MS);
  });
});

describe("signed session ids", () => {
  const seed = { q: "notes", v: "2025-11-25", c: { sampling: {} }, i: { name: "c", version: "1" }, b: "d1" };
  test("an id signed with another secret, altered, or malformed is refused", () => {
    const id = signSessionId(seed, "secret-one");
    expect(verifySessionId(id, "secret-one")).toMatchObject(seed);
    expect(verifySessionId(id, "secret-two")).toBeUndefined();
    const body = id.split(".")[1]!;
    const forgedBody = Buffer.from(JSON.stringify({ ...seed, q: "only=admin" })).toString("base64url");
    expect(verifySessionId(id.replace(body, forgedBody), "secret-one")).toBeUndefined();
    expect(verifySessionId("tp1.x", "secret-one")).toBeUndefined();
    expect(verifySessionId("not-ours", "secret-one")).toBeUndefined();
    expect(signSessionId(seed, "s")).not.toBe(signSessionId(seed, "s"));
  });

  test("a signed id has exactly one accepted spelling", () => {
    const id = signSessionId(seed, "secret-one");
    const [prefix, body, mac] = id.split(".") as [string, string, string];
    const respellings = [
      `${id}.x`,
      `${id}=`,
      `${prefix}.${body}=.${mac}`,
      `${prefix}.${body}.${mac}=`,
      ` ${id}`,
      `${id} `,
      `${prefix}.${body}.${mac}\n`,
      `${prefix}.${body}.${mac.slice(0, -1)}${mac.endsWith("A") ? "B" : "A"}`,
      `${prefix}.${body.replace(/-/g, "+").replace(/_/g, "/")}.${mac.replace(/-/g, "+").replace(/_/g, "/")}`,
      `${prefix}..${body}.${mac}`,
      `TP1.${body}.${mac}`,
      `${prefix}.${body}.${mac}%`,
    ].filter((s) => s !== id);
    for (const s of respellings) expect(verifySessionId(s, "secret-one"), s).toBeUndefined();
    // A MAC whose last character carries stray bits decodes to the same bytes: still refused.
    const last = mac.at(-1)!;
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const sibling = alphabet[alphabet.indexOf(last) ^ 1]!;
    const stray = `${prefix}.${body}.${mac.slice(0, -1)}${sibling}`;
    if (Buffer.from(stray.split(".")[2]!, "base64url").equals(Buffer.from(mac, "base64url"))) {
      expect(verifySessionId(stray, "secret-one")).toBeUndefined();
    }
    expect(verifySessionId(id, "secret-one")).toMatchObject(seed);
  });
});

describe("handles", () => {
  const route = {
    kind: "tool",
    name: "read",
    upstream: "fs",
    original: "read",
    toolsets: ["files"],
    definition: { name: "read" },
    captureOverBytes: 10,
  } as Route;
  const big = (n: number) => ({ content: [{ type: "text", text: "x".repeat(n) }] });
  test("an error result or a small one is returned as it is, not captured", () => {
    const store = new HandleStore(1000);
    expect(store.capture(route, { ...big(50), isError: true })).toEqual({ ...big(50), isError: true });
    expect(store.capture(route, big(5))).toEqual(big(5));
    expect(store.size).toBe(0);
  });
  test("a string parameter gets text and an object parameter gets structured data", () => {
    const store = new HandleStore(10_000);
    store.capture(route, {
      content: [{ type: "text", text: '{"a":[1,2]}'.padEnd(40) }],
      structuredContent: { a: [1, 2], pad: "y".repeat(20) },
    });
    const def = {
      name: "t",
      inputSchema: { type: "object", properties: { s: { type: "string" }, o: { type: "object" } } },
    };
    expect(store.substitute(def, { s: "@state:files/read/1", o: "@state:files/read/1", x: 1 })).toEqual({
      s: '{"a":[1,2]}'.padEnd(40),
      o: { a: [1, 2], pad: "y".repeat(20) },
      x: 1,
    });
  });
  test("a value larger than the session budget is returned whole and evicts nothing", () => {
    const store = new HandleStore(100);
    store.capture(route, big(60));
    expect(store.capture(route, big(500))).toEqual(big(500));
    expect(store.size).toBe(1);
  });
});

describe("request guards", () => {
  test("a rebinding Host or a foreign Origin is refused", () => {
    const loop = ["localhost", "127.0.0.1", "[::1]"];
    expect(rebindingProblem(req({ host: "127.0.0.1:4040" }), loop)).toBeUndefined();
    expect(rebindingProblem(req({ host: "evil.example.com" }), loop)).toMatch(/Host/);
    expect(rebindingProblem(req({ host: "localhost:1", origin: "http://evil.example.com" }), loop)).toMatch(
      /Origin/,
    );
    expect(
      rebindingProblem(req({ host: "localhost:1", origin: "http://localhost:1" }), loop),
    ).toBeUndefined();
    expect(
      rebindingProblem(req({ host: "gw.example.com", origin: "https://app.example.com" }), undefined, [
        "https://app.example.com",
      ]),
    ).toBeUndefined();
  });
  test("a wrong or missing bearer token is refused", () => {
    expect(authorized(req({}), [])).toBe(true);
    expect(authorized(req({}), ["abcdefgh"])).toBe(false);
    expect(authorized(req({ authorization: "Bearer abcdefgi" }), ["abcdefgh"])).toBe(false);
    expect(authorized(req({ authorization: "bearer abcdefgh" }), ["zzzzzzzz", "abcdefgh"])).toBe(true);
    expect(authorized(req({ authorization: "abcdefgh" }), ["abcdefgh"])).toBe(false);
  });
});
