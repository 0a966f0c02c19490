import type { IncomingMessage } from "node:http";
import { describe, expect, test } from "vitest";
import { createAuthenticator } from "../../src/auth/index.js";
import { signSessionId, verifySessionId } from "../../src/door/session-id.js";
import { rebindingProblem } from "../../src/http/guard.js";
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
    // Any Host accepted (no list) is no reason to accept an Origin that merely repeats it: a rebinding page does.
    expect(
      rebindingProblem(req({ host: "gw.example.com", origin: "https://gw.example.com" }), undefined),
    ).toMatch(/Origin/);
  });
  test("a wrong or missing bearer token is refused", async () => {
    const auth = createAuthenticator({ tokens: ["zzzzzzzz", "abcdefgh"] });
    const ok = async (authorization?: string) =>
      (await auth.authenticate(authorization ? { authorization } : {})).ok;
    expect(await ok()).toBe(false);
    expect(await ok("Bearer abcdefgi")).toBe(false);
    expect(await ok("bearer abcdefgh")).toBe(true);
    expect(await ok("abcdefgh")).toBe(false);
  });
});
