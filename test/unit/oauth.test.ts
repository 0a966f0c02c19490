/** The OAuth client's pure parts: challenges, discovery URLs, resource matching, scopes, iss, config, keys. */
import { describe, expect, test } from "vitest";
import { parseSource } from "../../src/config/source.js";
import { checkIssuer, startAuthorization } from "../../src/oauth/authorize.js";
import { bearerChallenge } from "../../src/oauth/challenge.js";
import { OAuthClient } from "../../src/oauth/client.js";
import { checkOAuthConfig } from "../../src/oauth/config.js";
import {
  authServerMetadataUrls,
  canonicalResource,
  discover,
  resourceCovers,
  resourceMetadataUrls,
} from "../../src/oauth/discovery.js";
import { OAuthFlowError } from "../../src/oauth/errors.js";
import type { Fetch } from "../../src/oauth/http.js";
import { clientMetadataDocument, matchOAuthPath } from "../../src/oauth/paths.js";
import { chooseAuthMethod, redirectSlot } from "../../src/oauth/registration.js";
import { selectScopes } from "../../src/oauth/scopes.js";
import { parseTokenKey } from "../../src/oauth/store/key.js";
import { MemoryTokenStore } from "../../src/oauth/store/memory.js";
import type { AuthServerMetadata, Discovery, PendingRecord } from "../../src/oauth/types.js";

describe("WWW-Authenticate", () => {
  test.each([
    [
      'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read"',
      {
        resourceMetadata: "https://mcp.example.com/.well-known/oauth-protected-resource",
        scope: ["files:read"],
      },
    ],
    [
      'Bearer error="insufficient_scope", scope="a b", resource_metadata="https://x/m", error_description="no, really"',
      { error: "insufficient_scope", scope: ["a", "b"], resourceMetadata: "https://x/m" },
    ],
    ['Basic realm="x", Bearer scope=a', { scope: ["a"] }],
    ['Basic abc==, Bearer realm="r", scope="s"', { scope: ["s"] }],
    ['bearer Scope="q\\"x"', { scope: ['q"x'] }],
    ["Bearer", {}],
  ])("%s", (header, expected) => {
    expect(bearerChallenge(header)).toEqual(expected);
  });

  test("a header without a Bearer challenge gives none", () => {
    expect(bearerChallenge('Negotiate, Basic realm="x"')).toBeUndefined();
  });
});

describe("discovery locations", () => {
  test("protected resource metadata: path form first, then the root", () => {
    expect(resourceMetadataUrls("https://h.example/public/mcp?x=1")).toEqual([
      "https://h.example/.well-known/oauth-protected-resource/public/mcp",
      "https://h.example/.well-known/oauth-protected-resource",
    ]);
    expect(resourceMetadataUrls("https://h.example/")).toEqual([
      "https://h.example/.well-known/oauth-protected-resource",
    ]);
  });

  test("authorization server metadata in the spec's order, for issuers with and without a path", () => {
    expect(authServerMetadataUrls("https://auth.example.com/tenant1")).toEqual([
      "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
      "https://auth.example.com/.well-known/openid-configuration/tenant1",
      "https://auth.example.com/tenant1/.well-known/openid-configuration",
    ]);
    expect(authServerMetadataUrls("https://auth.example.com")).toEqual([
      "https://auth.example.com/.well-known/oauth-authorization-server",
      "https://auth.example.com/.well-known/openid-configuration",
    ]);
  });

  test.each([
    ["https://mcp.example.com/mcp", "https://mcp.example.com/mcp", true],
    ["https://mcp.example.com", "https://mcp.example.com/mcp", true],
    ["https://MCP.example.com:443/mcp/", "https://mcp.example.com/mcp", true],
    ["https://mcp.example.com/mcp", "https://mcp.example.com/mcp2", false],
    ["https://evil.example.com/mcp", "https://mcp.example.com/mcp", false],
    ["http://mcp.example.com/mcp", "https://mcp.example.com/mcp", false],
    ["https://mcp.example.com/mcp#x", "https://mcp.example.com/mcp", false],
    ["not a url", "https://mcp.example.com/mcp", false],
  ])("metadata for %s covers %s: %s", (resource, upstream, covers) => {
    expect(resourceCovers(resource, upstream)).toBe(covers);
  });

  test("the canonical resource drops the query, the fragment and a bare trailing slash", () => {
    expect(canonicalResource("https://Mcp.Example.com:443/?a=1#f")).toBe("https://mcp.example.com");
    expect(canonicalResource("http://127.0.0.1:8080/mcp?x")).toBe("http://127.0.0.1:8080/mcp");
  });
});

describe("scope selection", () => {
  test.each([
    ["the challenge wins", { challenged: ["a"], resourceScopes: ["b"], configured: ["c"] }, ["a"]],
    ["then scopes_supported", { resourceScopes: ["b", "d"], configured: ["c"] }, ["b", "d"]],
    ["an empty scopes_supported is still the metadata's word", { resourceScopes: [], configured: ["c"] }, []],
    ["then the config", { configured: ["c"] }, ["c"]],
    ["nothing named: omit", {}, []],
    ["a step-up keeps what was asked before", { challenged: ["w"], previous: ["r"] }, ["r", "w"]],
    [
      "offline_access when the AS lists it",
      { challenged: ["a"], authServerScopes: ["a", "offline_access"] },
      ["a", "offline_access"],
    ],
    ["but not alone", { authServerScopes: ["offline_access"] }, []],
  ])("%s", (_, inputs, expected) => {
    expect(selectScopes({ wantsRefresh: true, ...inputs })).toEqual(expected);
  });

  test("a machine client never asks for offline_access", () => {
    expect(
      selectScopes({
        challenged: ["a", "offline_access"],
        authServerScopes: ["offline_access"],
        wantsRefresh: false,
      }),
    ).toEqual(["a"]);
  });
});

describe("RFC 9207: the authorization response's iss", () => {
  const pending = (iss_supported: boolean) =>
    ({ issuer: "https://as.example.com", iss_supported }) as PendingRecord;
  test.each([
    [true, "https://as.example.com", true],
    [true, null, false],
    [false, "https://as.example.com", true],
    [false, null, true],
    [false, "https://evil.example.com", false],
    [true, "https://as.example.com/", false],
    [true, "https://AS.example.com", false],
    [true, "https://as.example.com:443", false],
    [true, "https://as%2Eexample.com", false],
  ])("advertised %s, iss %s: accepted %s", (supported, iss, accepted) => {
    const check = () => checkIssuer(iss, pending(supported));
    if (accepted) expect(check).not.toThrow();
    else expect(check).toThrow(OAuthFlowError);
  });
});

describe("the authorization request", () => {
  const as: AuthServerMetadata = {
    issuer: "https://as.example.com",
    authorization_endpoint: "https://as.example.com/authorize",
    token_endpoint: "https://as.example.com/token",
    code_challenge_methods_supported: ["S256"],
  };
  const d: Discovery = {
    resource: "https://mcp.example.com/mcp",
    resourceMetadata: { authorization_servers: [as.issuer] },
    as,
  };
  const start = (scopes: string[], disc = d) =>
    startAuthorization({
      upstream: "u",
      principal: "p",
      discovery: disc,
      client: { source: "registered", client_id: "c1", method: "none", slot: "s" },
      redirectUri: "http://127.0.0.1:7/oauth/callback",
      scopes,
      now: 0,
    });

  test("carries PKCE S256, state, the resource and the scopes; consent is prompted for offline_access", () => {
    const { url, state, pending } = start(["a", "offline_access"]);
    const q = new URL(url).searchParams;
    expect(q.get("code_challenge_method")).toBe("S256");
    expect(q.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get("state")).toBe(state);
    expect(q.get("resource")).toBe(d.resource);
    expect(q.get("scope")).toBe("a offline_access");
    expect(q.get("prompt")).toBe("consent");
    expect(url).not.toContain(pending.code_verifier);
    expect(new URL(start([]).url).searchParams.has("scope")).toBe(false);
    expect(new URL(start(["a"]).url).searchParams.has("prompt")).toBe(false);
  });

  test("an AS without PKCE S256 in its metadata is refused", () => {
    const { code_challenge_methods_supported: _, ...noPkce } = as;
    expect(() => start(["a"], { ...d, as: noPkce })).toThrow(/PKCE/);
    expect(() => start(["a"], { ...d, as: { ...as, code_challenge_methods_supported: ["plain"] } })).toThrow(
      /PKCE/,
    );
  });
});

describe("client registration choices", () => {
  const as = (methods?: string[]) =>
    ({
      issuer: "i",
      token_endpoint: "t",
      ...(methods ? { token_endpoint_auth_methods_supported: methods } : {}),
    }) as AuthServerMetadata;
  test.each([
    [undefined, true, "client_secret_basic"],
    [["client_secret_post"], true, "client_secret_post"],
    [["client_secret_post", "client_secret_basic"], true, "client_secret_basic"],
    [["none"], false, "none"],
    [["client_secret_basic"], false, "none"],
  ])("AS supports %j, secret %s: %s", (methods, secret, method) => {
    expect(chooseAuthMethod(as(methods), secret)).toBe(method);
  });

  test("every loopback port shares one registration; other redirect URIs are their own", () => {
    expect(redirectSlot("http://127.0.0.1:5123/oauth/callback")).toBe("loopback/oauth/callback");
    expect(redirectSlot("http://localhost:3000/callback")).toBe("loopback/callback");
    expect(redirectSlot("https://tp.example.com/oauth/callback")).toBe(
      "https://tp.example.com/oauth/callback",
    );
  });
});

describe("served paths", () => {
  test("the routes the HTTP layer mounts", () => {
    expect(matchOAuthPath("/oauth/callback")).toEqual({ route: "callback" });
    expect(matchOAuthPath("/oauth/client-metadata.json")).toEqual({ route: "client-metadata" });
    expect(matchOAuthPath("/oauth/git%20hub/start")).toEqual({ route: "start", upstream: "git hub" });
    expect(matchOAuthPath("/oauth/a/b/start")).toBeUndefined();
    expect(matchOAuthPath("/mcp")).toBeUndefined();
  });

  test("the client metadata document names itself and the redirect URIs", () => {
    const doc = clientMetadataDocument({
      clientId: "https://tp.example.com/oauth/client-metadata.json",
      publicUrl: "https://tp.example.com/",
    });
    expect(doc).toMatchObject({
      client_id: "https://tp.example.com/oauth/client-metadata.json",
      redirect_uris: ["https://tp.example.com/oauth/callback", "http://127.0.0.1/oauth/callback"],
      grant_types: ["authorization_code", "refresh_token"],
      token_endpoint_auth_method: "none",
    });
  });
});

describe("the oauth block of an upstream", () => {
  const check = (yaml: string) => {
    const { source } = parseSource("packs.yaml", yaml);
    const path = ["upstreams", "u", "oauth"];
    const value = (source.data as { upstreams: { u: { oauth: unknown } } }).upstreams.u.oauth;
    return checkOAuthConfig(value, source, path);
  };

  test("a valid block", () => {
    const r = check(
      "upstreams:\n  u:\n    oauth:\n      mode: per-user\n      client_id: abc\n      client_secret: s\n      issuer: https://as.example.com\n      scopes: [repo, read:org]\n",
    );
    expect(r.errors).toEqual([]);
    expect(r.config).toEqual({
      mode: "per-user",
      grant: "authorization_code",
      client_id: "abc",
      client_secret: "s",
      issuer: "https://as.example.com",
      scopes: ["repo", "read:org"],
    });
  });

  test.each([
    ["mode: both", /mode must be "shared" or "per-user"/, "packs.yaml:4:13"],
    ["mode: shared\n      scope: [a]", /unknown key "scope".*did you mean "scopes"/, "packs.yaml:5:7"],
    [
      "mode: shared\n      grant: client_credentials\n      client_id: x",
      /needs client_id and client_secret/,
      "packs.yaml:4:7",
    ],
    [
      "mode: per-user\n      grant: client_credentials\n      client_id: x\n      client_secret: y",
      /machine to machine/,
      "packs.yaml:4:13",
    ],
    ["mode: shared\n      issuer: http://as.example.com", /issuer must be an https URL/, "packs.yaml:5:15"],
    [
      "mode: shared\n      client_metadata_url: https://tp.example.com",
      /https URL with a path/,
      "packs.yaml:5:28",
    ],
    ['mode: shared\n      scopes: ["a b"]', /scopes must be a list of scope names/, "packs.yaml:5:15"],
    ["mode: shared\n      client_secret: s", /client_secret needs client_id/, "packs.yaml:5:22"],
  ])("%s is refused where it is written", (block, message, where) => {
    const r = check(`upstreams:\n  u:\n    oauth:\n      ${block}\n`);
    expect(r.config).toBeUndefined();
    const e = r.errors.find((x) => message.test(`${x.message} (${x.hint ?? ""})`));
    expect(e, JSON.stringify(r.errors)).toBeDefined();
    expect(`${e!.file}:${e!.line}:${e!.col}`).toBe(where);
  });
});

describe("TOOLPACKS_TOKEN_KEY", () => {
  const key32 = Buffer.alloc(32, 7);
  test.each([
    ["hex", key32.toString("hex")],
    ["base64", key32.toString("base64")],
    ["base64url", key32.toString("base64url")],
    ["base64 with spaces around", ` ${key32.toString("base64")}\n`],
  ])("accepts %s", (_, value) => {
    expect(parseTokenKey(value).equals(key32)).toBe(true);
  });

  test.each([
    ["missing", undefined],
    ["empty", ""],
    ["a passphrase", "correct horse battery staple, long enough to look like a key"],
    ["31 bytes", Buffer.alloc(31, 1).toString("base64")],
    ["33 bytes of hex", Buffer.alloc(33, 1).toString("hex")],
    ["63 hex digits", "a".repeat(63)],
  ])("refuses %s, naming the variable and never the value", (_, value) => {
    const err = (() => {
      try {
        parseTokenKey(value);
      } catch (e) {
        return e as OAuthFlowError;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(OAuthFlowError);
    expect(err!.message).toContain("TOOLPACKS_TOKEN_KEY");
    if (value) expect(err!.message).not.toContain(value.trim());
  });
});

describe("the OAuth client object", () => {
  const up = { name: "u", url: "https://mcp.example.com/mcp", oauth: { mode: "per-user" as const } };
  const client = (maxInstances?: number) =>
    new OAuthClient({
      store: new MemoryTokenStore(),
      upstream: (n) => (n === "u" ? up : undefined),
      publicUrl: "https://tp.example.com",
      ...(maxInstances ? { maxInstances } : {}),
      fetch: () => Promise.reject(new Error("no network in unit tests")),
    });

  test("one UpstreamAuth per (upstream, principal), and a bounded number of them", () => {
    const c = client(2);
    const alice = c.auth("u", "alice");
    expect(c.auth("u", "alice")).toBe(alice);
    expect(c.auth("u", "bob")).not.toBe(alice);
    c.auth("u", "carol");
    expect(c.auth("u", "alice")).not.toBe(alice);
  });

  test("a per-user upstream needs a principal; an unknown upstream is named", () => {
    expect(() => client().auth("u")).toThrow(/per-user: sign in/);
    expect(() => client().auth("nope", "alice")).toThrow(/no upstream nope with oauth/);
  });

  test("tokens are never sent to a plain-http upstream off the loopback", async () => {
    const f = () => Promise.reject(new Error("must not be called"));
    await expect(discover(f, "u", "http://mcp.example.com/mcp", undefined)).rejects.toThrow(/must use https/);
  });
});

describe("where metadata fetches may go", () => {
  const json = (body: unknown) => () =>
    new Response(JSON.stringify(body), { headers: { "content-type": "application/json" } });
  const redirect = (to: string) => () => new Response(null, { status: 302, headers: { location: to } });
  /** The network as fetch sees it: routes by URL; a redirect is followed as fetch follows one, unless told not to. */
  function network(routes: Record<string, () => Response>) {
    const asked: string[] = [];
    const fetch: Fetch = async (input, init) => {
      let url = String(input);
      for (let hop = 0; hop < 10; hop++) {
        asked.push(url);
        const res = routes[url]?.() ?? new Response("no", { status: 404 });
        const location = res.headers.get("location");
        if (!location || init?.redirect === "manual") return res;
        url = new URL(location, url).href;
      }
      throw new Error("redirect loop");
    };
    return { fetch, asked };
  }
  const UP = "https://mcp.example.com/mcp";
  const PRM = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp";
  const INTERNAL = { resource: "INTERNAL-7f3a-secret", authorization_servers: ["https://as.example.com"] };
  const onLoopback = (asked: string[]) =>
    asked.filter((u) => /^https?:\/\/(127\.|localhost|\[::1\])/.test(u));

  test("an upstream off the loopback cannot point discovery at this machine's loopback, by a redirect or by its challenge", async () => {
    const net = network({
      [PRM]: redirect("http://127.0.0.1:6379/internal"),
      "http://127.0.0.1:6379/internal": json(INTERNAL),
    });
    const viaRedirect = await discover(net.fetch, "u", UP, undefined).catch((e: Error) => e);
    expect(onLoopback(net.asked)).toEqual([]);
    expect(String(viaRedirect)).not.toContain("INTERNAL-7f3a");
    const net2 = network({ "http://127.0.0.1:6379/x": json(INTERNAL) });
    const challenged = { resourceMetadata: "http://127.0.0.1:6379/x" };
    const viaChallenge = await discover(net2.fetch, "u", UP, challenged).catch((e: Error) => e);
    expect(viaChallenge).toBeInstanceOf(OAuthFlowError);
    expect(onLoopback(net2.asked)).toEqual([]);
  });

  test("every redirect hop of a metadata fetch is checked: https never turns into plain http, and nothing of a refused answer is quoted", async () => {
    const net = network({
      [PRM]: redirect("https://mcp.example.com/moved"),
      "https://mcp.example.com/moved": redirect("http://10.0.0.5/latest/meta-data"),
      "http://10.0.0.5/latest/meta-data": json(INTERNAL),
      "https://mcp.example.com/.well-known/oauth-protected-resource": json(INTERNAL),
    });
    const err = await discover(net.fetch, "u", UP, undefined).catch((e: Error) => e);
    expect(net.asked).not.toContain("http://10.0.0.5/latest/meta-data");
    // The root document names another resource: said, but what it names is not repeated.
    expect(err).toBeInstanceOf(OAuthFlowError);
    expect(String(err)).toMatch(/is for another resource than https:\/\/mcp\.example\.com\/mcp/);
    expect(String(err)).not.toContain("INTERNAL-7f3a");
  });
});
