/** Upstream OAuth in the serving core, without processes: transport retries, instances per principal, the gate, the session. */

import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, test } from "vitest";
import type { UpstreamState } from "../../src/catalog/inventory.js";
import { MemoryTokenStore } from "../../src/oauth/store/memory.js";
import { CredentialRecords } from "../../src/oauth/store/records.js";
import { Tickets, ticketPrincipal } from "../../src/oauth/ticket.js";
import type { UpstreamAuth } from "../../src/oauth/types.js";
import { bindingOf, credentialsOf, refsOf } from "../../src/proxy/instances.js";
import { Session } from "../../src/proxy/session.js";
import { resolve } from "../../src/resolve.js";
import { select } from "../../src/selection.js";
import { UpstreamHttpError } from "../../src/upstream/http-answer.js";
import { AuthorizationRequiredError, sendAuthorized } from "../../src/upstream/http-auth.js";
import type { Response } from "../../src/upstream/http-exchange.js";
import { sharedRef } from "../../src/upstream/instance.js";
import type { Signal } from "../../src/wire/signal.js";
import { catalogOf } from "../helpers/catalog.js";
import { FakeHost, rawClient, sdkClient } from "../helpers/session-host.js";

const URL_A = "http://127.0.0.1:4040/oauth/tools/start?scope=x&ticket=T";

function answer(status: number, www?: string): Response {
  return {
    statusCode: status,
    headers: www ? { "www-authenticate": www } : {},
    body: { dump: async () => {} },
  } as unknown as Response;
}

/** An UpstreamAuth that answers challenges from a list and records what it was told. */
function scripted(replies: ("retry" | string)[]): UpstreamAuth & { told: string[]; n: number } {
  let token = 0;
  const a = {
    told: [] as string[],
    n: 0,
    headers: async () => ({ authorization: `Bearer tok-${token}` }),
    onUnauthorized: async (www: string) => {
      a.told.push(www);
      const r = replies[a.n++] ?? "retry";
      token++;
      return r === "retry" ? ("retry" as const) : { authorizeUrl: r };
    },
  };
  return a;
}

describe("the HTTP transport's challenge handling", () => {
  test("a 401 is handed to the auth and the request sent once more with its new headers", async () => {
    const auth = scripted(["retry"]);
    const sent: string[] = [];
    const res = await sendAuthorized(auth, "tools", async (h) => {
      sent.push(h.authorization!);
      return answer(sent.length === 1 ? 401 : 200, 'Bearer error="invalid_token"');
    });
    expect(res.statusCode).toBe(200);
    expect(sent).toEqual(["Bearer tok-0", "Bearer tok-1"]);
  });

  test("a second challenge after the retry fails the request instead of looping", async () => {
    const auth = scripted(["retry", "retry", "retry"]);
    let sends = 0;
    const err = await sendAuthorized(auth, "tools", async () => {
      sends++;
      return answer(401, "Bearer");
    }).catch((e) => e);
    expect(err).toBeInstanceOf(UpstreamHttpError);
    expect(err.message).toContain("refused the OAuth token toolpacks obtained for it again");
    expect(sends).toBe(2);
  });

  test("a person must authorize: a typed error carrying the upstream and the URL", async () => {
    const err = await sendAuthorized(scripted([URL_A]), "tools", async () => answer(401, "Bearer")).catch(
      (e) => e,
    );
    expect(err).toBeInstanceOf(AuthorizationRequiredError);
    expect(err).toMatchObject({ upstream: "tools", authorizeUrl: URL_A, code: -32000 });
    expect(err.data).toEqual({ reason: "authorization_required", upstream: "tools", url: URL_A });
  });

  test("only a 403 that says insufficient_scope is a challenge; another 403 is the upstream's answer", async () => {
    const auth = scripted(["retry"]);
    const plain = await sendAuthorized(auth, "tools", async () => answer(403, 'Bearer realm="x"'));
    expect(plain.statusCode).toBe(403);
    expect(auth.told).toEqual([]);
    let n = 0;
    const stepped = await sendAuthorized(auth, "tools", async () =>
      answer(n++ ? 200 : 403, 'Bearer error="insufficient_scope", scope="admin"'),
    );
    expect(stepped.statusCode).toBe(200);
    expect(auth.told).toHaveLength(1);
  });
});

describe("tickets in handed-out URLs", () => {
  test("a ticket names its principal for its upstream only, and nothing forged or altered passes", () => {
    const t = new Tickets(Buffer.alloc(32, 7));
    const ticket = t.issue("tools", "alice");
    expect(t.open(ticket, "tools")?.principal).toBe("alice");
    expect(t.open(ticket, "other")).toBeUndefined();
    expect(new Tickets(Buffer.alloc(32, 8)).open(ticket, "tools")).toBeUndefined();
    const flipped = `${ticket.slice(0, 30)}${ticket[30] === "A" ? "B" : "A"}${ticket.slice(31)}`;
    expect(t.open(flipped, "tools")).toBeUndefined();
  });

  test("a ticket expires, and is used up once its principal has authorized after it was issued", async () => {
    let now = 1_000_000;
    const t = new Tickets(Buffer.alloc(32, 1), () => now);
    const ticket = t.issue("tools", "bob");
    const records = new CredentialRecords(new MemoryTokenStore());
    await expect(ticketPrincipal(t, records, "tools", ticket)).resolves.toBe("bob");
    await records.putGrant("tools", "bob", {
      issuer: "https://as",
      token_endpoint: "https://as/token",
      client: { source: "registered", client_id: "c", method: "none" },
      resource: "https://up/mcp",
      grant: "authorization_code",
      scopes: [],
      access_token: "a",
      obtained_at: now + 1,
    });
    await expect(ticketPrincipal(t, records, "tools", ticket)).rejects.toThrow(/authorized since this link/);
    now += 31 * 60_000;
    expect(t.open(ticket, "tools")).toBeUndefined();
  });
});

describe("instances of a per-user upstream", () => {
  const catalog = catalogOf(
    'auth: { tokens: ["a-token-of-length"] }\nupstreams:\n  tools: { url: "https://x/mcp", oauth: { mode: per-user } }\n  plain: { url: "https://y/mcp" }\n',
  );

  test("each principal gets its own instance, the same one every time; nobody signed in gets none of theirs", () => {
    const a1 = refsOf(catalog, ["tools", "plain"], {}, "s1", "alice");
    const a2 = refsOf(catalog, ["tools"], {}, "s2", "alice");
    const b = refsOf(catalog, ["tools"], {}, "s3", "bob");
    const nobody = refsOf(catalog, ["tools"], {}, "s4");
    expect(a1.get("tools")).toMatchObject({ kind: "credential", principal: "alice" });
    expect(a1.get("tools")!.id).toBe(a2.get("tools")!.id);
    expect(b.get("tools")!.id).not.toBe(a1.get("tools")!.id);
    expect(nobody.get("tools")!.id).not.toBe(a1.get("tools")!.id);
    expect(a1.get("tools")!.id).not.toContain("alice");
    expect(a1.get("plain")).toEqual(sharedRef("plain"));
  });

  test("a session of a per-user upstream is bound to its principal", () => {
    const of = (who?: string) => bindingOf(credentialsOf(catalog, ["tools"], {}, who));
    expect(of("alice")).not.toBe(of("bob"));
    expect(of("alice")).not.toBe(of());
    expect(bindingOf(credentialsOf(catalog, ["plain"], {}, "alice"))).toBe(
      bindingOf(credentialsOf(catalog, ["plain"], {}, "bob")),
    );
  });
});

const CATALOG = `
auth: { tokens: ["a-token-of-length"] }
upstreams:
  tools: { url: "https://x/mcp", oauth: { mode: per-user } }
  other: { command: x }
toolsets:
  me:
    tools: [tools/whoami]
  mixed:
    default: false
    tools: [tools/whoami, other/echo]
  local:
    tools: [other/echo]
`;

const WAITING: UpstreamState = {
  status: "unavailable",
  reason: "authorization required",
  authorizeUrl: URL_A,
};
const READY: UpstreamState = {
  status: "ready",
  tools: [{ name: "whoami", inputSchema: { type: "object" } }],
  prompts: [],
  resources: [],
  templates: [],
};
const ECHO: UpstreamState = { ...READY, tools: [{ name: "echo", inputSchema: { type: "object" } }] };

describe("the gate", () => {
  test("a toolset whose upstream waits for authorization is authorization_required with the URL; with another upstream down too, it is unavailable", () => {
    const catalog = catalogOf(CATALOG);
    const picked = select(catalog, "mixed");
    if (!picked.ok) throw new Error(picked.error);
    const r = resolve(catalog, picked.selection, new Map([["tools", WAITING]]));
    expect(r.unavailable.map((u) => [u.name, u.reason, u.url])).toEqual([
      ["me", "authorization_required", URL_A],
      ["mixed", "upstream-unavailable", undefined],
      ["local", "upstream-unavailable", undefined],
    ]);
    expect(r.unavailable[0]!.detail).toBe("tools: authorization required");
  });
});

describe("a session meets authorization required", () => {
  /** A session whose `tools` upstream waits for authorization until `authorize()`; calls then succeed. */
  function setup(wait: (signal: Signal) => Promise<void> = async () => {}) {
    const catalog = catalogOf(CATALOG);
    const host = new FakeHost(catalog);
    const picked = select(catalog, "");
    if (!picked.ok) throw new Error(picked.error);
    const session = new Session(host, {
      id: "k",
      kind: "session",
      client: "test",
      binding: "",
      identity: undefined,
      selection: picked.selection,
      resolution: resolve(
        catalog,
        picked.selection,
        new Map([
          ["tools", WAITING],
          ["other", ECHO],
        ]),
      ),
      refs: new Map([["tools", sharedRef("tools")]]),
      digest: "d",
      sessionKey: "k",
      credentials: { names: [], values: {} },
    });
    host.sessions.add(session);
    /** The upstream lists its tools now (it was authorized). */
    const listed = () =>
      session.update(
        resolve(
          catalog,
          picked.selection,
          new Map([
            ["tools", READY],
            ["other", ECHO],
          ]),
        ),
      );
    const waited: string[] = [];
    host.authorization = {
      upstreamOf: (toolset, tool) => (toolset === "me" && tool === "whoami" ? "tools" : undefined),
      wait: async (ref, signal) => {
        waited.push(ref.upstream);
        await wait(signal);
        listed();
      },
    };
    host.script = () => ({ content: [{ type: "text", text: "as you" }] });
    return { host, session, waited, listed };
  }

  test("a client without URL elicitation gets a JSON-RPC error with the URL, not 'Unknown tool'", async () => {
    const { session } = setup();
    const client = await sdkClient(session);
    const err = await client.callTool({ name: "whoami", arguments: {} }).catch((e) => e);
    expect(err.code).toBe(-32000);
    expect(err.message).toContain(`authorization required: open ${URL_A}`);
    expect(err.data).toEqual({ reason: "authorization_required", upstream: "tools", url: URL_A });
    const unknown = await client.callTool({ name: "nope", arguments: {} }).catch((e) => e);
    expect(unknown.message).toContain("Unknown tool: nope");
  });

  test("a client with URL elicitation is asked, and the call is made once the authorization has arrived", async () => {
    const { host, session, waited } = setup();
    const client = await sdkClient(session, { elicitation: { url: {} } });
    const asked: unknown[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params);
      return { action: "accept" };
    });
    const result = await client.callTool({ name: "whoami", arguments: {} });
    expect(result.content).toEqual([{ type: "text", text: "as you" }]);
    expect(asked).toEqual([expect.objectContaining({ mode: "url", url: URL_A })]);
    expect(waited).toEqual(["tools"]);
    expect(host.seen.map((s) => s.method)).toEqual(["tools/call"]);
  });

  test("an authorization that does not arrive in time fails the call with the URL, and nothing is sent upstream", async () => {
    const { host, session } = setup(async () => {
      throw new Error("the authorization was not completed within 300 s");
    });
    const client = await sdkClient(session, { elicitation: { url: {} } });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept" }));
    const err = await client.callTool({ name: "whoami", arguments: {} }).catch((e) => e);
    expect(err.message).toContain(
      `the authorization was not completed within 300 s; open ${URL_A} to authorize toolpacks for upstream tools, then try again`,
    );
    expect(host.seen).toEqual([]);
  });

  test("an upstream call that meets it (the upstream listed its tools without a token) is retried after the elicitation", async () => {
    const { host, session, listed } = setup();
    let calls = 0;
    host.script = () => {
      if (calls++ === 0) throw new AuthorizationRequiredError("tools", URL_A);
      return { content: [{ type: "text", text: "second time" }] };
    };
    listed();
    const client = await sdkClient(session, { elicitation: { url: {} } });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept" }));
    const result = await client.callTool({ name: "whoami", arguments: {} });
    expect(result.content).toEqual([{ type: "text", text: "second time" }]);
    expect(calls).toBe(2);
  });

  test("a 2026-07-28 client is never sent an elicitation: its call ends with the error naming the URL", async () => {
    const { host, session, waited, listed } = setup();
    const raw = await rawClient(session);
    const _meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": { elicitation: { url: {} } },
    };
    // A tool of a toolset its upstream will not list yet, then one the upstream refuses when called.
    await raw.send({ id: 1, method: "tools/call", params: { name: "whoami", arguments: {}, _meta } });
    const pending = await raw.answer(1);
    listed();
    host.script = () => {
      throw new AuthorizationRequiredError("tools", URL_A);
    };
    await raw.send({ id: 2, method: "tools/call", params: { name: "whoami", arguments: {}, _meta } });
    const refused = await raw.answer(2);
    for (const a of [pending, refused]) {
      expect(a.error?.code).toBe(-32000);
      expect(a.error?.message).toContain(`authorization required: open ${URL_A}`);
      expect(a.error?.data).toEqual({ reason: "authorization_required", upstream: "tools", url: URL_A });
    }
    expect(raw.received.filter((m) => "method" in m && "id" in m)).toEqual([]);
    expect(waited).toEqual([]);
  });
});
