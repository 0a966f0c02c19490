/** Toolsets by identity, challenges, metadata and config checks: the pure parts of src/auth. */
import { extractWWWAuthenticateParams } from "@modelcontextprotocol/sdk/client/auth.js";
import { describe, expect, test } from "vitest";
import {
  challengeInsufficientScope,
  challengeUnauthorized,
  checkAuthConfig,
  checkRequires,
  createAuthenticator,
  discoveryUrls,
  grantKey,
  grants,
  meetsRequirement,
  metadataPaths,
  type Principal,
  parsePrincipalJson,
  type Requires,
  resourceMetadataUrlFor,
  scopesToChallenge,
} from "../../src/auth/index.js";

const jwt = (scopes: string[], claims: Record<string, unknown> = {}): Principal => ({
  subject: "u",
  scopes: new Set(scopes),
  claims,
  via: "jwt",
});
const bareToken: Principal = { subject: "token:abcd1234", scopes: "all", claims: {}, via: "token" };

describe("meetsRequirement", () => {
  const alice = jwt(["notes:read", "mcp"], {
    groups: ["eng", "ops"],
    scope: "notes:read mcp",
    tenant: "acme",
    admin: true,
  });
  test.each<[string, Principal | undefined, Requires | undefined, boolean]>([
    ["no requirement is met by anyone", undefined, undefined, true],
    ["an empty requirement is met by anyone", undefined, {}, true],
    ["no principal meets a scope requirement", undefined, { scopes: ["mcp"] }, false],
    ["any one scope of the list is enough", alice, { scopes: ["notes:write", "notes:read"] }, true],
    ["a scope the token lacks is not met", alice, { scopes: ["notes:write"] }, false],
    ["any one value of a claim list is enough", alice, { claims: { groups: ["admins", "ops"] } }, true],
    ["an array claim matches by element only", alice, { claims: { groups: ["eng ops"] } }, false],
    ["a string claim matches exactly", alice, { claims: { tenant: ["acme"] } }, true],
    [
      "a string claim is not split on spaces",
      jwt([], { name: "admin impostor" }),
      { claims: { name: ["admin"] } },
      false,
    ],
    ["the scope claim is split on spaces", alice, { claims: { scope: ["mcp"] } }, true],
    ["a boolean claim matches its text", alice, { claims: { admin: ["true"] } }, true],
    ["a missing claim is not met", alice, { claims: { department: ["eng"] } }, false],
    [
      "all keys must be met (scopes and claims)",
      alice,
      { scopes: ["mcp"], claims: { groups: ["eng"] } },
      true,
    ],
    ["one unmet key fails the whole", alice, { scopes: ["mcp"], claims: { groups: ["sales"] } }, false],
    ["two claims are two keys", alice, { claims: { groups: ["eng"], tenant: ["other"] } }, false],
    ["a bare static token has every scope", bareToken, { scopes: ["anything"] }, true],
    ["a bare static token has no claims", bareToken, { claims: { groups: ["eng"] } }, false],
    [
      "a bare static token fails a mixed requirement on its claim",
      bareToken,
      { scopes: ["a"], claims: { g: ["x"] } },
      false,
    ],
    ["a prototype key is not a claim", jwt([]), { claims: { constructor: ["Object"] } }, false],
  ])("%s", (_, principal, requires, expected) => {
    expect(meetsRequirement(principal, requires)).toBe(expected);
  });
});

describe("grantKey", () => {
  const catalog = new Map<string, Requires | undefined>([
    ["notes", undefined],
    ["admin", { scopes: ["admin"] }],
    ["eng", { claims: { groups: ["eng"] } }],
  ]);
  test("two principals that unlock the same toolsets share a key, whoever they are", () => {
    const a = jwt(["admin", "mcp"], { groups: ["eng"], sub: "a" });
    const b = { ...jwt(["admin"], { groups: ["eng", "x"] }), subject: "b" };
    expect(grants(a, catalog)).toEqual(["admin", "eng"]);
    expect(grantKey(a, catalog)).toBe(grantKey(b, catalog));
  });
  test("a principal that unlocks a different set gets a different key", () => {
    const keys = new Set(
      [jwt([]), jwt(["admin"]), jwt([], { groups: ["eng"] }), jwt(["admin"], { groups: ["eng"] })].map((p) =>
        grantKey(p, catalog),
      ),
    );
    expect(keys.size).toBe(4);
  });
  test("the key does not depend on the catalog's order or on ungated toolsets", () => {
    const p = jwt(["admin"]);
    const reordered = { eng: catalog.get("eng"), other: undefined, admin: catalog.get("admin") };
    expect(grantKey(p, reordered)).toBe(grantKey(p, catalog));
  });
  test("a catalog that gates nothing keys every principal the same, as the empty string", () => {
    expect(grantKey(jwt(["admin"]), { notes: undefined })).toBe("");
    expect(grantKey(undefined, {})).toBe("");
  });
});

describe("scopesToChallenge", () => {
  test.each<[string, Principal | undefined, (Requires | undefined)[], string[]]>([
    ["nothing needed", jwt([]), [undefined, {}], []],
    ["met already", jwt(["a"]), [{ scopes: ["a"] }], []],
    ["the first scope of an unmet list", jwt([]), [{ scopes: ["w", "x"] }], ["w"]],
    ["held scopes of met lists are kept", jwt(["r"]), [{ scopes: ["r"] }, { scopes: ["w"] }], ["r", "w"]],
    ["claims alone never need a scope", jwt([]), [{ claims: { g: ["x"] } }], []],
    ["unmet claims make a scope useless", jwt([], { g: "y" }), [{ scopes: ["a"], claims: { g: ["x"] } }], []],
    [
      "met claims leave the scope to ask for",
      jwt([], { g: "x" }),
      [{ scopes: ["a"], claims: { g: ["x"] } }],
      ["a"],
    ],
    [
      "without a principal, every list's first",
      undefined,
      [{ scopes: ["a"] }, { scopes: ["b", "c"] }],
      ["a", "b"],
    ],
  ])("%s", (_, p, needed, expected) => {
    expect(scopesToChallenge(p, needed)).toEqual(expected);
  });
});

describe("parsePrincipalJson", () => {
  test("scope is split, claims kept, subject from sub or cli", () => {
    const p = parsePrincipalJson('{"scope":"a b","groups":["x"]}');
    expect(p.subject).toBe("cli");
    expect([...(p.scopes as Set<string>)]).toEqual(["a", "b"]);
    expect(meetsRequirement(p, { scopes: ["b"], claims: { groups: ["x"] } })).toBe(true);
    expect(parsePrincipalJson('{"sub":"alice","scp":["r"]}')).toMatchObject({ subject: "alice" });
    expect([...(parsePrincipalJson('{"scp":["r"]}').scopes as Set<string>)]).toEqual(["r"]);
  });
  test.each(["not json", "[1]", '"text"', "null"])("%s is refused with a hint", (input) => {
    expect(() => parsePrincipalJson(input)).toThrow(/--as must be a JSON object of claims/);
  });
});

describe("challenges", () => {
  const rm = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp";
  const asSdkReadsIt = (header: string) =>
    extractWWWAuthenticateParams(
      new Response(null, { status: 401, headers: { "www-authenticate": header } }),
    );

  test("the SDK client reads resource_metadata and scope from the 401 challenge", () => {
    const parsed = asSdkReadsIt(challengeUnauthorized(rm, { scopes: ["mcp", "notes:read", "mcp"] }));
    expect(parsed.resourceMetadataUrl?.href).toBe(rm);
    expect(parsed.scope).toBe("mcp notes:read");
    expect(parsed.error).toBeUndefined();
  });

  test("the SDK client reads insufficient_scope and every scope from the 403 challenge", () => {
    const parsed = asSdkReadsIt(
      challengeInsufficientScope(["mcp", "notes:write"], rm, 'needs "scope=admin" \\ now'),
    );
    expect(parsed).toMatchObject({ error: "insufficient_scope", scope: "mcp notes:write" });
    expect(parsed.resourceMetadataUrl?.href).toBe(rm);
  });

  test("an invalid_token challenge names its error after the resource metadata", () => {
    const header = challengeUnauthorized(rm, { error: "invalid_token", description: 'bad "quoted"\ntext' });
    expect(header).toBe(
      `Bearer resource_metadata="${rm}", error="invalid_token", error_description="bad quotedtext"`,
    );
    expect(asSdkReadsIt(header).error).toBe("invalid_token");
  });
});

describe("protected resource metadata", () => {
  test.each([
    ["https://mcp.example.com/mcp", "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"],
    ["https://mcp.example.com", "https://mcp.example.com/.well-known/oauth-protected-resource"],
    ["https://h:8443/a/mcp/", "https://h:8443/.well-known/oauth-protected-resource/a/mcp"],
  ])("%s is described at %s", (resource, url) => {
    expect(resourceMetadataUrlFor(resource)).toBe(url);
  });

  test("the document names the audience, the issuer, the scopes and header bearer tokens only", () => {
    const auth = createAuthenticator({
      oauth: {
        issuer: "https://auth.example.com",
        audience: "https://mcp.example.com/mcp",
        scopes_supported: ["mcp"],
      },
    });
    expect(auth.metadata()).toEqual({
      resource: "https://mcp.example.com/mcp",
      authorization_servers: ["https://auth.example.com"],
      scopes_supported: ["mcp"],
      bearer_methods_supported: ["header"],
    });
    expect(auth.metadataPaths).toEqual([
      "/.well-known/oauth-protected-resource/mcp",
      "/.well-known/oauth-protected-resource",
    ]);
    expect(metadataPaths("https://mcp.example.com")).toEqual(["/.well-known/oauth-protected-resource"]);
    expect(auth.resourceMetadataUrl).toBe("https://mcp.example.com/.well-known/oauth-protected-resource/mcp");
    auth.close();
  });
});

describe("discovery", () => {
  test("the MCP order of metadata URLs, for issuers with and without a path", () => {
    expect(discoveryUrls("https://a.example")).toEqual([
      "https://a.example/.well-known/oauth-authorization-server",
      "https://a.example/.well-known/openid-configuration",
    ]);
    expect(discoveryUrls("https://a.example/tenant1")).toEqual([
      "https://a.example/.well-known/oauth-authorization-server/tenant1",
      "https://a.example/.well-known/openid-configuration/tenant1",
      "https://a.example/tenant1/.well-known/openid-configuration",
    ]);
  });

  test("metadata naming another issuer is refused, so its keys are never fetched", async () => {
    const asked: string[] = [];
    const fakeFetch = (async (url: string | URL | Request) => {
      asked.push(String(url));
      return Response.json({ issuer: "https://honest.example", jwks_uri: "https://attacker.example/jwks" });
    }) as typeof fetch;
    const auth = createAuthenticator(
      { oauth: { issuer: "https://attacker.example", audience: "https://mcp.example.com/mcp" } },
      { fetch: fakeFetch },
    );
    const token = `${Buffer.from('{"alg":"RS256","kid":"k"}').toString("base64url")}.e30.c2ln`;
    const r = await auth.authenticate({ authorization: `Bearer ${token}` });
    expect(r).toMatchObject({ ok: false, status: 503 });
    expect(asked).toEqual(["https://attacker.example/.well-known/oauth-authorization-server"]);
  });
});

describe("config checks", () => {
  const oauth = { issuer: "https://auth.example.com", audience: "https://mcp.example.com/mcp" };
  test.each<[string, Parameters<typeof checkAuthConfig>[0], string[]]>([
    ["a good block", { tokens: ["0123456789"], oauth }, []],
    ["neither tokens nor oauth", {}, ["auth"]],
    ["a short token", { tokens: ["short", { token: "x" }] }, ["auth.tokens.0", "auth.tokens.1.token"]],
    ["a token listed twice", { tokens: ["0123456789", "0123456789"] }, ["auth.tokens.1"]],
    [
      "an http issuer off loopback",
      { oauth: { ...oauth, issuer: "http://auth.example.com" } },
      ["auth.oauth.issuer"],
    ],
    [
      "an audience with a query",
      { oauth: { ...oauth, audience: "https://m.example/mcp?x" } },
      ["auth.oauth.audience"],
    ],
    [
      "HS256 or none",
      { oauth: { ...oauth, algorithms: ["RS256", "HS256", "none"] } },
      ["auth.oauth.algorithms.1", "auth.oauth.algorithms.2"],
    ],
    [
      "offline_access advertised",
      { oauth: { ...oauth, scopes_supported: ["offline_access"] } },
      ["auth.oauth.scopes_supported.0"],
    ],
    [
      "a bad introspection url",
      { oauth: { ...oauth, introspection: { url: "ftp://x", client_id: "a", client_secret: "b" } } },
      ["auth.oauth.introspection.url"],
    ],
    [
      "loopback http is fine",
      { oauth: { issuer: "http://127.0.0.1:9000", audience: "http://localhost:4040/mcp" } },
      [],
    ],
  ])("%s", (_, config, paths) => {
    expect(checkAuthConfig(config).map((p) => p.path.join("."))).toEqual(paths);
  });

  test("a short token's problem never quotes the token", () => {
    expect(JSON.stringify(checkAuthConfig({ tokens: ["s3cr3t"] }))).not.toContain("s3cr3t");
  });

  test("requires: without auth: is a config error; empty lists are too", () => {
    expect(checkRequires({ scopes: ["a"] }, false).map((p) => p.path.join("."))).toEqual(["requires"]);
    expect(checkRequires({ scopes: ["a"] }, true)).toEqual([]);
    expect(checkRequires({ scopes: [], claims: { g: [] } }, true).map((p) => p.path.join("."))).toEqual([
      "requires.scopes",
      "requires.claims.g",
    ]);
  });
});
