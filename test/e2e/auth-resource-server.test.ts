/** The resource server against a real authorization server (oidc-provider, in-process on 127.0.0.1). */
import { createPublicKey, randomBytes } from "node:crypto";
import { decodeJwt, decodeProtectedHeader, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  type AuthConfig,
  type AuthResult,
  CLOCK_SKEW_S,
  createAuthenticator,
  JWKS_COOLDOWN_MS,
  type OAuthConfig,
} from "../../src/auth/index.js";
import { INTROSPECTION_LIMITS } from "../../src/auth/introspection-gate.js";
import { CLIENT_SECRET, signingKey, startIssuer, type TestIssuer } from "../helpers/oidc.js";

const AUDIENCE = "http://127.0.0.1:4040/mcp";
const RM_URL = "http://127.0.0.1:4040/.well-known/oauth-protected-resource/mcp";

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** A fake clock starting now; tokens are minted with the real one. */
function clock() {
  let t = Date.now();
  return {
    now: () => t,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

function refused(r: AuthResult) {
  if (r.ok) throw new Error(`expected a refusal, got principal ${r.principal.subject}`);
  return r;
}

let as: TestIssuer;
beforeAll(async () => {
  as = await startIssuer({ audience: AUDIENCE });
});
afterAll(async () => {
  await as?.close();
});

function resourceServer(oauth: Partial<OAuthConfig> = {}, tokens?: AuthConfig["tokens"], c = clock()) {
  const auth = createAuthenticator(
    {
      ...(tokens ? { tokens } : {}),
      oauth: { issuer: as.issuer, audience: AUDIENCE, scopes_supported: ["mcp"], ...oauth },
    },
    { now: c.now },
  );
  return { auth, clock: c };
}

describe("tokens from the authorization server", () => {
  test("a request without a token gets 401 pointing at the resource metadata, with no error code", async () => {
    const { auth } = resourceServer();
    const r = refused(await auth.authenticate({}));
    expect(r.status).toBe(401);
    if (r.status === 503) throw new Error("unreachable");
    expect(r.wwwAuthenticate).toBe(`Bearer resource_metadata="${RM_URL}", scope="mcp"`);
    const basic = refused(await auth.authenticate({ authorization: "Basic dXNlcjpwYXNz" }));
    expect(basic.status === 401 && basic.wwwAuthenticate).not.toContain("error=");
  });

  test("a malformed Authorization header gets 400 invalid_request", async () => {
    const { auth } = resourceServer();
    const r = refused(await auth.authenticate({ authorization: "Bearer two words" }));
    expect(r).toMatchObject({ status: 400, error: "invalid_request" });
  });

  test("a malformed token gets 401 invalid_token", async () => {
    const { auth } = resourceServer();
    for (const token of ["eyJhbGciOiJSUzI1NiJ9.not-json.sig", "eyJub3QiOiJhIGp3dCJ9.e30.e30"]) {
      const r = refused(await auth.authenticate(bearer(token)));
      expect(r).toMatchObject({ status: 401, error: "invalid_token" });
      expect(r.status === 401 && r.wwwAuthenticate).toContain('error="invalid_token"');
    }
  });

  test("a real token is accepted with its subject, scopes and claims", async () => {
    const { auth } = resourceServer();
    const token = await as.token({ scope: "mcp notes:read", claims: { groups: ["eng"] } });
    const r = await auth.authenticate(bearer(token));
    if (!r.ok) throw new Error(r.description);
    expect(r.principal.subject).toBe("jwt");
    expect(r.principal.via).toBe("jwt");
    expect([...(r.principal.scopes as Set<string>)]).toEqual(["mcp", "notes:read"]);
    expect(r.principal.claims.groups).toEqual(["eng"]);
    expect(auth.stats.jwksFetches).toBe(1);
    // The keys are cached: a second token costs no request.
    expect((await auth.authenticate(bearer(await as.token()))).ok).toBe(true);
    expect(auth.stats.jwksFetches).toBe(1);
  });

  test("an expired token is refused, even one accepted (and remembered) before", async () => {
    const { auth, clock: c } = resourceServer();
    const token = await as.token();
    expect((await auth.authenticate(bearer(token))).ok).toBe(true);
    const exp = decodeJwt(token).exp! * 1000;
    c.advance(exp - c.now() + 31_000);
    expect(refused(await auth.authenticate(bearer(token)))).toMatchObject({
      status: 401,
      error: "invalid_token",
      description: "the token has expired",
    });
  });

  test("a token that is not valid yet (nbf) is refused", async () => {
    const { auth } = resourceServer();
    const token = await as.token({ claims: { nbf: Math.floor(Date.now() / 1000) + 3600 } });
    expect(refused(await auth.authenticate(bearer(token))).description).toBe(
      "the token is not valid yet (nbf)",
    );
  });

  test("a token from another issuer is refused, even signed with a key this issuer publishes", async () => {
    const other = await startIssuer({ audience: AUDIENCE, keys: as.key });
    try {
      const { auth } = resourceServer();
      const token = await other.token();
      expect(decodeProtectedHeader(token).kid).toBe(as.key.kid);
      expect(refused(await auth.authenticate(bearer(token))).description).toBe(
        "the token was issued by another issuer",
      );
    } finally {
      await other.close();
    }
  });

  test("a token for another audience is refused", async () => {
    const { auth } = resourceServer();
    const token = await as.token({ resource: "http://127.0.0.1:4041/mcp" });
    expect(refused(await auth.authenticate(bearer(token))).description).toBe(
      "the token was issued for another resource (aud)",
    );
  });

  test("a token whose payload was altered is refused (bad signature)", async () => {
    const { auth } = resourceServer();
    const [h, p, s] = (await as.token({ scope: "mcp" })).split(".");
    const claims = JSON.parse(Buffer.from(p!, "base64url").toString());
    const forged = Buffer.from(JSON.stringify({ ...claims, scope: "mcp admin" })).toString("base64url");
    expect(refused(await auth.authenticate(bearer(`${h}.${forged}.${s}`))).description).toBe(
      "the token's signature does not verify",
    );
  });

  test('an "alg: none" token is refused', async () => {
    const { auth } = resourceServer();
    const claims = decodeJwt(await as.token());
    const head = Buffer.from(JSON.stringify({ alg: "none", typ: "at+jwt", kid: as.key.kid })).toString(
      "base64url",
    );
    const body = Buffer.from(JSON.stringify(claims)).toString("base64url");
    for (const token of [`${head}.${body}.`, `${head}.${body}.e30`]) {
      const r = refused(await auth.authenticate(bearer(token)));
      expect(r.status).toBe(401);
    }
    expect(auth.stats.jwksFetches).toBe(0);
  });

  test("an HS256 token signed with the issuer's public key as the secret is refused", async () => {
    const { auth } = resourceServer();
    const claims = decodeJwt(await as.token({ scope: "mcp" }));
    const pem = createPublicKey({ key: as.key.publicJwk as never, format: "jwk" }).export({
      type: "spki",
      format: "pem",
    });
    for (const secret of [Buffer.from(pem), Buffer.from(JSON.stringify(as.key.publicJwk))]) {
      const token = await new SignJWT({ ...claims, scope: "mcp admin" })
        .setProtectedHeader({ alg: "HS256", typ: "at+jwt", kid: as.key.kid })
        .sign(secret);
      expect(refused(await auth.authenticate(bearer(token))).description).toBe(
        "the token's signing algorithm is not accepted",
      );
    }
  });

  test("a token lacking a needed scope gets 403 insufficient_scope naming the scopes to ask for", async () => {
    const { auth } = resourceServer({ step_up: true });
    const r = await auth.authenticate(bearer(await as.token({ scope: "mcp notes:read" })));
    if (!r.ok) throw new Error(r.description);
    expect(auth.insufficientScope(r.principal, [{ scopes: ["notes:read"] }])).toBeUndefined();
    const denial = auth.insufficientScope(r.principal, [
      { scopes: ["notes:write", "admin"] },
      { scopes: ["notes:read"] },
    ]);
    expect(denial).toMatchObject({ status: 403, error: "insufficient_scope" });
    expect(denial?.status === 403 && denial.wwwAuthenticate).toBe(
      `Bearer error="insufficient_scope", scope="mcp notes:read notes:write", resource_metadata="${RM_URL}", ` +
        `error_description="the token lacks a scope this request needs"`,
    );
    // Only claims missing: a new token would not help, so no step-up challenge.
    expect(auth.insufficientScope(r.principal, [{ claims: { groups: ["admins"] } }])).toBeUndefined();
  });
});

describe("signing keys and rotation", () => {
  test("an unknown kid is refused after one JWKS refetch; a rotated key is accepted after the refetch", async () => {
    const rotating = await startIssuer({ audience: AUDIENCE });
    try {
      const c = clock();
      const auth = createAuthenticator(
        { oauth: { issuer: rotating.issuer, audience: AUDIENCE } },
        { now: c.now },
      );
      expect((await auth.authenticate(bearer(await rotating.token()))).ok).toBe(true);
      expect(rotating.hits.get("/jwks")).toBe(1);

      const stranger = await signingKey("stranger");
      const claims = decodeJwt(await rotating.token());
      const forged = await new SignJWT(claims)
        .setProtectedHeader({ alg: "RS256", typ: "at+jwt", kid: "stranger" })
        .sign(stranger.privateKey);
      c.advance(JWKS_COOLDOWN_MS + 1);
      expect(refused(await auth.authenticate(bearer(forged))).description).toBe(
        "the token is signed with a key the issuer does not publish",
      );
      expect(rotating.hits.get("/jwks")).toBe(2);

      await rotating.rotate("key-2");
      const fresh = await rotating.token();
      expect(decodeProtectedHeader(fresh).kid).toBe("key-2");
      // Within the cooldown of the last refetch the new kid is not asked about yet…
      expect(refused(await auth.authenticate(bearer(fresh))).status).toBe(401);
      expect(rotating.hits.get("/jwks")).toBe(2);
      // …and once it has passed, one refetch brings the rotated key.
      c.advance(JWKS_COOLDOWN_MS + 1);
      const r = await auth.authenticate(bearer(fresh));
      expect(r.ok).toBe(true);
      expect(rotating.hits.get("/jwks")).toBe(3);
    } finally {
      await rotating.close();
    }
  });

  test("a flood of unknown kids makes at most one JWKS request per cooldown", async () => {
    const c = clock();
    const auth = createAuthenticator({ oauth: { issuer: as.issuer, audience: AUDIENCE } }, { now: c.now });
    expect((await auth.authenticate(bearer(await as.token()))).ok).toBe(true);
    const before = as.hits.get("/jwks") ?? 0;
    const claims = decodeJwt(await as.token());
    const stranger = await signingKey("stranger");
    const flood = (n: number) =>
      Promise.all(
        Array.from({ length: n }, async (_, i) =>
          auth.authenticate(
            bearer(
              await new SignJWT(claims)
                .setProtectedHeader({ alg: "RS256", kid: `unknown-${i}` })
                .sign(stranger.privateKey),
            ),
          ),
        ),
      );
    expect((await flood(100)).every((r) => !r.ok && r.status === 401)).toBe(true);
    expect(as.hits.get("/jwks")).toBe(before);
    c.advance(JWKS_COOLDOWN_MS + 1);
    expect((await flood(100)).every((r) => !r.ok && r.status === 401)).toBe(true);
    expect(as.hits.get("/jwks")).toBe(before + 1);
    expect((await flood(100)).every((r) => !r.ok)).toBe(true);
    expect(as.hits.get("/jwks")).toBe(before + 1);
  });

  test("discovery falls back to OpenID configuration when RFC 8414 metadata is absent", async () => {
    const oidcOnly = await startIssuer({
      audience: AUDIENCE,
      hide: ["/.well-known/oauth-authorization-server"],
    });
    try {
      const auth = createAuthenticator({ oauth: { issuer: oidcOnly.issuer, audience: AUDIENCE } });
      expect((await auth.authenticate(bearer(await oidcOnly.token()))).ok).toBe(true);
      expect(oidcOnly.hits.get("/.well-known/oauth-authorization-server")).toBe(1);
      expect(oidcOnly.hits.get("/.well-known/openid-configuration")).toBe(1);
    } finally {
      await oidcOnly.close();
    }
  });

  test("an unreachable authorization server gives 503, never a 401 that would send the client to re-authorize", async () => {
    const gone = await startIssuer({ audience: AUDIENCE });
    const token = await gone.token();
    const issuer = gone.issuer;
    await gone.close();
    const auth = createAuthenticator({ oauth: { issuer, audience: AUDIENCE } });
    expect(refused(await auth.authenticate(bearer(token)))).toMatchObject({ status: 503, retryAfter: 30 });
  });
});

describe("opaque tokens and introspection", () => {
  const introspection = () => ({
    url: `${as.issuer}/token/introspection`,
    client_id: "toolpacks",
    client_secret: CLIENT_SECRET,
  });

  test("an active opaque token is accepted by introspection, and the answer is cached until its exp", async () => {
    const { auth, clock: c } = resourceServer({ introspection: introspection() });
    const token = await as.token({ client: "opaque", scope: "mcp notes:read" });
    expect(token.split(".")).toHaveLength(1);
    const r = await auth.authenticate(bearer(token));
    if (!r.ok) throw new Error(r.description);
    expect(r.principal).toMatchObject({ subject: "client:opaque", via: "introspection" });
    expect([...(r.principal.scopes as Set<string>)]).toEqual(["mcp", "notes:read"]);
    await Promise.all([auth.authenticate(bearer(token)), auth.authenticate(bearer(token))]);
    expect(auth.stats.introspections).toBe(1);
    // Past exp the cached answer is dropped and the server is asked again (the clock skew still admits it)…
    const exp = (r.principal.claims.exp as number) * 1000;
    c.advance(exp - c.now() + 1_000);
    expect((await auth.authenticate(bearer(token))).ok).toBe(true);
    expect(auth.stats.introspections).toBe(2);
    // …and beyond the skew the token is expired, whatever the server says.
    c.advance(CLOCK_SKEW_S * 1000);
    expect(refused(await auth.authenticate(bearer(token))).description).toBe("the token has expired");
    expect(auth.stats.introspections).toBe(3);
  });

  test("2,000 made-up opaque tokens cost the authorization server a bounded number of introspections, and a refused token is asked about once while its refusal is remembered", async () => {
    const c = clock();
    const limits: string[] = [];
    const auth = createAuthenticator(
      { oauth: { issuer: as.issuer, audience: AUDIENCE, introspection: introspection() } },
      { now: c.now, onLimit: (l) => limits.push(l) },
    );
    const asked = () => as.hits.get("/token/introspection") ?? 0;
    const before = asked();
    const tokens = Array.from({ length: 2000 }, (_, i) => `made-up-${i}-${randomBytes(12).toString("hex")}`);
    const results = await Promise.all(tokens.map((t) => auth.authenticate(bearer(t))));
    // The clock stands still: no more than the bucket holds.
    expect(asked() - before).toBeLessThanOrEqual(INTROSPECTION_LIMITS.burst);
    expect(results.some((r) => r.ok)).toBe(false);
    const judged = results.filter((r) => !r.ok && r.status === 401);
    const limited = results.filter((r) => !r.ok && r.status === 503);
    expect(judged.length).toBe(asked() - before);
    expect(limited.length).toBe(2000 - judged.length);
    expect(limited[0]).toMatchObject({ error: "temporarily_unavailable", retryAfter: 1 });
    expect(limits.length).toBe(limited.length);
    expect(limits.every((l) => l === "introspections")).toBe(true);
    // A refused token again, once the bucket has refilled: answered from memory, not asked again…
    c.advance(5_000);
    const n = asked();
    expect(refused(await auth.authenticate(bearer(tokens[0]!))).description).toBe("the token is not active");
    expect(asked()).toBe(n);
    // …until its refusal is forgotten.
    c.advance(INTROSPECTION_LIMITS.refusalTtlMs);
    expect(refused(await auth.authenticate(bearer(tokens[0]!))).description).toBe("the token is not active");
    expect(asked()).toBe(n + 1);
    // A real token gets through as soon as the rate allows.
    const real = await as.token({ client: "opaque" });
    expect((await auth.authenticate(bearer(real))).ok).toBe(true);
    auth.close();
  });

  test("an inactive opaque token is refused", async () => {
    const { auth } = resourceServer({ introspection: introspection() });
    expect(refused(await auth.authenticate(bearer("Zm9yZ2VkLW9wYXF1ZS10b2tlbi0xMjM")))).toMatchObject({
      status: 401,
      description: "the token is not active",
    });
  });

  test("an opaque token without introspection configured is refused", async () => {
    const { auth } = resourceServer();
    const token = await as.token({ client: "opaque" });
    expect(refused(await auth.authenticate(bearer(token))).description).toBe(
      "the token is not a JWT access token",
    );
  });
});

describe("static tokens", () => {
  test("a static token with subject and scopes gives that principal; a bare one has every scope", async () => {
    const { auth } = resourceServer({}, [
      "bare-token-0123",
      { token: "ci-token-0123", subject: "ci", scopes: ["notes:read"] },
    ]);
    const ci = await auth.authenticate(bearer("ci-token-0123"));
    if (!ci.ok) throw new Error(ci.description);
    expect(ci.principal).toMatchObject({ subject: "ci", via: "token", claims: {} });
    expect([...(ci.principal.scopes as Set<string>)]).toEqual(["notes:read"]);
    const bare = await auth.authenticate(bearer("bare-token-0123"));
    if (!bare.ok) throw new Error(bare.description);
    expect(bare.principal.scopes).toBe("all");
    expect(bare.principal.subject).toMatch(/^token:[0-9a-f]{8}$/);
    expect(refused(await auth.authenticate(bearer("bare-token-0124"))).status).toBe(401);
  });

  test("with static tokens only, a wrong token gets the realm challenge", async () => {
    const auth = createAuthenticator({ tokens: ["only-token-0123"] });
    const r = refused(await auth.authenticate(bearer("other-token-0123")));
    expect(r.status === 401 && r.wwwAuthenticate).toBe(
      'Bearer realm="toolpacks", error="invalid_token", error_description="the token is not accepted"',
    );
    expect(auth.metadata()).toBeUndefined();
  });
});

describe("secrets", () => {
  test("no token or client secret appears in logs, results or thrown errors", async () => {
    const lines: string[] = [];
    const logger = {
      warn: (m: string, f?: Record<string, unknown>) => lines.push(JSON.stringify([m, f])),
      debug: (m: string, f?: Record<string, unknown>) => lines.push(JSON.stringify([m, f])),
    };
    const secrets = ["static-secret-token-77", CLIENT_SECRET, "wrong-client-secret-99"];
    const results: unknown[] = [];
    const good = await as.token();
    const opaque = await as.token({ client: "opaque" });
    secrets.push(good, opaque);
    for (const client_secret of [CLIENT_SECRET, "wrong-client-secret-99"]) {
      const auth = createAuthenticator(
        {
          tokens: ["static-secret-token-77"],
          oauth: {
            issuer: as.issuer,
            audience: "http://127.0.0.1:4041/mcp",
            introspection: { url: `${as.issuer}/token/introspection`, client_id: "toolpacks", client_secret },
          },
        },
        { logger },
      );
      for (const t of [good, opaque, `${good}x`, "static-secret-token-78"])
        results.push(await auth.authenticate(bearer(t)));
    }
    const thrown: string[] = [];
    try {
      createAuthenticator({ tokens: ["short77"], oauth: { issuer: "ftp://x", audience: "y" } });
    } catch (e) {
      thrown.push(String(e));
    }
    expect(thrown).toHaveLength(1);
    expect(results.some((r) => (r as AuthResult).ok)).toBe(false);
    expect(lines.length).toBeGreaterThan(0);
    const everything = JSON.stringify([lines, results, thrown]);
    for (const s of [...secrets, "short77"]) expect(everything).not.toContain(s);
  });
});
